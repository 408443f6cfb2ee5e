// The consumer side: the forecasts' ArrowArrayStream as record batches (see Arrow.cs).
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace TfTrain.Arrow {

/// <summary>Reads an ArrowArrayStream of struct arrays whose columns are of the types above
/// (the consumer side), copying every batch into managed columns, and releases it.</summary>
internal static unsafe class ArrowImport {
  static T Fn<T>(IntPtr p) where T : class {
    return (T)(object)Marshal.GetDelegateForFunctionPointer(p, typeof(T));
  }

  static string Utf8(byte* s) {
    if (s == null) return "";
    int n = 0;
    while (s[n] != 0) n++;
    return Encoding.UTF8.GetString(s, n);
  }

  static Exception StreamError(CArrowArrayStream* stream, string what, int code) {
    IntPtr message = Fn<GetLastErrorFn>(stream->get_last_error)(stream);
    return new TftException(Status.Internal, string.Format(
        "the forecast stream's {0} failed ({1}): {2}", what, code,
        message == IntPtr.Zero ? "" : Utf8((byte*)message)));
  }

  /// <summary>Consumes *stream: reads every batch, then releases it (also on failure).</summary>
  public static List<RecordBatch> ReadStream(CArrowArrayStream* stream) {
    var batches = new List<RecordBatch>();
    CArrowSchema schema = default(CArrowSchema);
    try {
      int rc = Fn<GetSchemaFn>(stream->get_schema)(stream, &schema);
      if (rc != 0) throw StreamError(stream, "get_schema", rc);
      var names = new string[schema.n_children];
      var formats = new string[schema.n_children];
      for (long i = 0; i < schema.n_children; i++) {
        names[i] = Utf8(schema.children[i]->name);
        formats[i] = Utf8(schema.children[i]->format);
      }
      while (true) {
        CArrowArray array = default(CArrowArray);
        rc = Fn<GetNextFn>(stream->get_next)(stream, &array);
        if (rc != 0) throw StreamError(stream, "get_next", rc);
        if (array.release == IntPtr.Zero) break;
        try {
          var columns = new Column[array.n_children];
          for (long i = 0; i < array.n_children; i++) {
            columns[i] = ReadColumn(names[i], formats[i], array.children[i], array.offset);
          }
          batches.Add(new RecordBatch(columns));
        } finally {
          Fn<ReleaseArrayFn>(array.release)(&array);
        }
      }
    } finally {
      if (schema.release != IntPtr.Zero) Fn<ReleaseSchemaFn>(schema.release)(&schema);
      if (stream->release != IntPtr.Zero) Fn<ReleaseStreamFn>(stream->release)(stream);
    }
    return batches;
  }

  static Column ReadColumn(string name, string format, CArrowArray* a, long parentOffset) {
    long offset = a->offset + parentOffset;
    int n = (int)a->length;
    var bits = (byte*)a->buffers[0];
    bool[] valid = null;
    if (bits != null && a->null_count != 0) {
      valid = new bool[n];
      for (int i = 0; i < n; i++) {
        long j = offset + i;
        valid[i] = (bits[j / 8] & (1 << (int)(j % 8))) != 0;
      }
    }
    if (format == "u") {
      var offsets = (int*)a->buffers[1];
      var data = (byte*)a->buffers[2];
      var values = new string[n];
      for (int i = 0; i < n; i++) {
        if (valid != null && !valid[i]) continue;
        int start = offsets[offset + i];
        values[i] = Encoding.UTF8.GetString(data + start, offsets[offset + i + 1] - start);
      }
      return new StringColumn(name, values);
    }
    if (format == "l" || format.StartsWith("tsu:")) {
      var values = new long[n];
      var p = (long*)a->buffers[1];
      for (int i = 0; i < n; i++) values[i] = p[offset + i];
      return format == "l" ? (Column)new Int64Column(name, values, valid)
                           : new TimestampColumn(name, values, format.Substring(4), valid);
    }
    if (format == "g") {
      var values = new double[n];
      var p = (double*)a->buffers[1];
      for (int i = 0; i < n; i++) values[i] = p[offset + i];
      return new DoubleColumn(name, values, valid);
    }
    if (format == "tdD") {
      var values = new int[n];
      var p = (int*)a->buffers[1];
      for (int i = 0; i < n; i++) values[i] = p[offset + i];
      return new Date32Column(name, values, valid);
    }
    throw new TftException(Status.Internal,
                           "the forecast stream's column '" + name + "' has format " + format);
  }
}

}
