// The public C# API of tftrain (namespace TfTrain): a thin layer over the SWIG-generated,
// internal classes in ../generated (namespace TfTrain.Swig, from bindings/swig/tftrain.i).
using System;

namespace TfTrain {

/// <summary>The C API's tft_status.</summary>
public enum Status {
  Ok = 0,
  InvalidArgument = -1,
  Config = -2,
  Data = -3,
  Io = -4,
  Numerical = -5,
  Cancelled = -6,
  Unsupported = -7,
  Internal = -8,
  BufferTooSmall = -9,
  OutOfMemory = -10,
}

/// <summary>A failure reported by the library: its status and its message
/// (tft_last_error(), read on the failing thread inside the wrapper).</summary>
public class TftException : Exception {
  public Status Status { get; private set; }

  public TftException(Status status, string message) : base(message) { Status = status; }

  /// <summary>The library's name of the status, e.g. "ERROR_CONFIG".</summary>
  public string StatusName { get { return Library.StatusName(Status); } }

  public override string ToString() { return "TftException(" + StatusName + "): " + Message; }

  /// <summary>The exception a failing call throws for <paramref name="status"/>: a
  /// <see cref="TftOutOfMemoryException"/> (an <see cref="OutOfMemoryException"/>) for
  /// Status.OutOfMemory, else a TftException.</summary>
  public static Exception ForStatus(Status status, string message) {
    if (status == Status.OutOfMemory) return new TftOutOfMemoryException(message);
    return new TftException(status, message);
  }
}

/// <summary>TFT_ERROR_OUT_OF_MEMORY: an allocation failed (the library's one-line message says
/// what was being done and what to change). It is .NET's own kind, an
/// <see cref="OutOfMemoryException"/> (InsufficientMemoryException is sealed), so
/// <c>catch (OutOfMemoryException)</c> sees it; it is not a <see cref="TftException"/> (a class
/// has one base), and carries the same <see cref="Status"/>. The library stays usable: the handle that failed is described in
/// tftrain.h.</summary>
public sealed class TftOutOfMemoryException : OutOfMemoryException {
  public TftOutOfMemoryException(string message) : base(message) {}

  public Status Status { get { return Status.OutOfMemory; } }

  public string StatusName { get { return Library.StatusName(Status); } }

  public override string ToString() {
    return "TftOutOfMemoryException(" + StatusName + "): " + Message;
  }
}

/// <summary>Version and status names.</summary>
public static class Library {
  /// <summary>The library's version, "MAJOR.MINOR.PATCH".</summary>
  public static string Version { get { return Swig.tftrain.VersionString(); } }
  public static int VersionMajor { get { return Swig.tftrain.VersionMajor(); } }
  public static int VersionMinor { get { return Swig.tftrain.VersionMinor(); } }
  public static int VersionPatch { get { return Swig.tftrain.VersionPatch(); } }
  /// <summary>tft_api_version(): MAJOR * 10000 + MINOR * 100 + PATCH of the library.</summary>
  public static int ApiVersion { get { return Swig.tftrain.ApiVersion(); } }

  /// <summary>The status's name without the prefix, e.g. "ERROR_CONFIG".</summary>
  public static string StatusName(Status status) { return Swig.tftrain.StatusName((int)status); }

  // Null or an embedded NUL (which the C API would see as the end) is an argument error.
  internal static string Text(string name, string value) {
    if (value == null) throw new ArgumentNullException(name);
    if (value.IndexOf('\0') >= 0) throw new ArgumentException(name + " contains a NUL character", name);
    return value;
  }

  internal static ulong Count(string name, long value) {
    if (value < 0) {
      throw new ArgumentOutOfRangeException(name, value, name + " must not be negative");
    }
    return (ulong)value;
  }
}

/// <summary>The native progress callback (tft_progress_fn), used by the SWIG layer.</summary>
[System.Runtime.InteropServices.UnmanagedFunctionPointer(
    System.Runtime.InteropServices.CallingConvention.Cdecl)]
internal delegate int NativeProgressCallback(IntPtr progress, IntPtr user);

}
