using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace TfTrain {

/// <summary>A table handed to the library in memory (tft_data), laid out like a data file:
/// one row per series and time step; the configured columns are read with the same types and
/// rules as a Parquet file. Trainers and predictions made from it do not need it.
///
/// Ownership: the library takes the Arrow C stream over (the spec's move semantics) and reads
/// it whole before the factory returns, in success and failure alike, then releases it. The
/// arrays it keeps (until Dispose) are its own copies made by the exporter
/// (Arrow.ArrowExport), so the caller's batches may change or go right after.</summary>
public sealed class Data : IDisposable {
  Swig.Data raw;

  Data(Swig.Data raw) { this.raw = raw; }

  internal Swig.Data Raw {
    get {
      if (raw == null) throw new ObjectDisposedException("Data");
      return raw;
    }
  }

  /// <summary>Takes over the ArrowArrayStream at `stream` (a C struct, e.g. filled by
  /// Apache.Arrow.C's CArrowArrayStreamExporter): on return, whatever happened, it is marked
  /// released and the caller must not release it (tft_data_create_from_arrow_stream).</summary>
  public static Data FromArrowStream(IntPtr stream) {
    return new Data(new Swig.Data((ulong)stream.ToInt64()));
  }

  /// <summary>Hands the batches (all with the first's columns) to the library as an Arrow C
  /// stream; they are enumerated once, before this returns. No batch is a TftException with
  /// Status.Data.</summary>
  public static Data FromRecordBatches(IEnumerable<Arrow.RecordBatch> batches) {
    if (batches == null) throw new ArgumentNullException("batches");
    unsafe {
      var stream = (Arrow.CArrowArrayStream*)Marshal.AllocHGlobal(sizeof(Arrow.CArrowArrayStream));
      try {
        *stream = default(Arrow.CArrowArrayStream);
        Arrow.ArrowExport.ExportStream(batches, stream);
        return FromArrowStream((IntPtr)stream);
      } finally {
        // The library released it; this only guards against a failure before the hand-over.
        if (stream->release != IntPtr.Zero) {
          ((Arrow.ReleaseStreamFn)Marshal.GetDelegateForFunctionPointer(
              stream->release, typeof(Arrow.ReleaseStreamFn)))(stream);
        }
        Marshal.FreeHGlobal((IntPtr)stream);
      }
    }
  }

  /// <summary>The same, for one batch.</summary>
  public static Data FromRecordBatch(Arrow.RecordBatch batch) {
    if (batch == null) throw new ArgumentNullException("batch");
    return FromRecordBatches(new[] { batch });
  }

  /// <summary>The number of rows the data holds.</summary>
  public long NumRows { get { return Raw.GetNumRows(); } }

  public void Dispose() {
    var r = raw;
    raw = null;
    if (r != null) r.Dispose();
  }
}

}
