// The Arrow C Data Interface's structs and callbacks, as the spec defines them, and the
// unmanaged memory behind exported structs (see Arrow.cs for why this is hand-written).
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace TfTrain.Arrow {

// The spec's structs, field for field.
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct CArrowSchema {
  public byte* format;
  public byte* name;
  public byte* metadata;
  public long flags;
  public long n_children;
  public CArrowSchema** children;
  public CArrowSchema* dictionary;
  public IntPtr release;
  public IntPtr private_data;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct CArrowArray {
  public long length;
  public long null_count;
  public long offset;
  public long n_buffers;
  public long n_children;
  public void** buffers;
  public CArrowArray** children;
  public CArrowArray* dictionary;
  public IntPtr release;
  public IntPtr private_data;
}

[StructLayout(LayoutKind.Sequential)]
internal struct CArrowArrayStream {
  public IntPtr get_schema;
  public IntPtr get_next;
  public IntPtr get_last_error;
  public IntPtr release;
  public IntPtr private_data;
}

[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
internal unsafe delegate void ReleaseSchemaFn(CArrowSchema* schema);
[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
internal unsafe delegate void ReleaseArrayFn(CArrowArray* array);
[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
internal unsafe delegate int GetSchemaFn(CArrowArrayStream* stream, CArrowSchema* out_);
[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
internal unsafe delegate int GetNextFn(CArrowArrayStream* stream, CArrowArray* out_);
[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
internal unsafe delegate IntPtr GetLastErrorFn(CArrowArrayStream* stream);
[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
internal unsafe delegate void ReleaseStreamFn(CArrowArrayStream* stream);

// Unmanaged blocks freed together: the memory behind one exported struct.
internal sealed class NativeBlocks {
  readonly List<IntPtr> blocks = new List<IntPtr>();

  public unsafe IntPtr Alloc(long bytes) {
    IntPtr p = Marshal.AllocHGlobal(new IntPtr(Math.Max(bytes, 1)));
    blocks.Add(p);
    byte* b = (byte*)p;
    for (long i = 0; i < bytes; i++) b[i] = 0;
    return p;
  }

  public unsafe byte* Utf8(string s) {
    byte[] bytes = Encoding.UTF8.GetBytes(s);
    IntPtr p = Alloc(bytes.Length + 1);
    Marshal.Copy(bytes, 0, p, bytes.Length);
    return (byte*)p;
  }

  public void Free() {
    foreach (var p in blocks) Marshal.FreeHGlobal(p);
    blocks.Clear();
  }

  // A GCHandle to this, for private_data.
  public IntPtr Handle() { return GCHandle.ToIntPtr(GCHandle.Alloc(this)); }

  public static void FreeHandle(IntPtr handle) {
    var h = GCHandle.FromIntPtr(handle);
    ((NativeBlocks)h.Target).Free();
    h.Free();
  }
}

}
