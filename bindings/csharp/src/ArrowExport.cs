// The producer side: record batches as an ArrowArrayStream (see Arrow.cs).
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace TfTrain.Arrow {

/// <summary>Exports record batches as an ArrowArrayStream (the producer side). Every buffer is
/// copied into unmanaged memory when the consumer takes a batch, so nothing managed is pinned
/// or reachable from native code; each struct's release frees what it owns, a base struct's
/// release releases the children the consumer has not moved out.</summary>
internal static unsafe class ArrowExport {
  const int EINVAL = 22, EIO = 5;
  const long FlagNullable = 2;

  // The callbacks, alive for the life of the process.
  static readonly ReleaseSchemaFn releaseSchema = ReleaseSchema;
  static readonly ReleaseArrayFn releaseArray = ReleaseArray;
  static readonly GetSchemaFn getSchema = GetSchema;
  static readonly GetNextFn getNext = GetNext;
  static readonly GetLastErrorFn getLastError = GetLastError;
  static readonly ReleaseStreamFn releaseStream = ReleaseStream;
  static readonly IntPtr releaseSchemaPtr = Marshal.GetFunctionPointerForDelegate(releaseSchema);
  static readonly IntPtr releaseArrayPtr = Marshal.GetFunctionPointerForDelegate(releaseArray);

  sealed class StreamState {
    public IEnumerator<RecordBatch> Batches;
    public RecordBatch First; // the schema's template; given out by the first get_next
    public bool FirstTaken;
    public readonly NativeBlocks Error = new NativeBlocks();
    public IntPtr LastError;
  }

  /// <summary>Fills *stream (which the caller allocated) with a stream over `batches`.</summary>
  public static void ExportStream(IEnumerable<RecordBatch> batches, CArrowArrayStream* stream) {
    var state = new StreamState { Batches = batches.GetEnumerator() };
    if (state.Batches.MoveNext()) {
      state.First = state.Batches.Current;
    } else {
      state.FirstTaken = true;
    }
    stream->get_schema = Marshal.GetFunctionPointerForDelegate(getSchema);
    stream->get_next = Marshal.GetFunctionPointerForDelegate(getNext);
    stream->get_last_error = Marshal.GetFunctionPointerForDelegate(getLastError);
    stream->release = Marshal.GetFunctionPointerForDelegate(releaseStream);
    stream->private_data = GCHandle.ToIntPtr(GCHandle.Alloc(state));
  }

  static StreamState State(CArrowArrayStream* stream) {
    return (StreamState)GCHandle.FromIntPtr(stream->private_data).Target;
  }

  static int Fail(StreamState state, int code, string message) {
    state.Error.Free();
    state.LastError = (IntPtr)state.Error.Utf8(message);
    return code;
  }

  static int GetSchema(CArrowArrayStream* stream, CArrowSchema* out_) {
    var state = State(stream);
    try {
      if (state.First == null) return Fail(state, EINVAL, "no record batches: the schema is unknown");
      ExportSchema(state.First, out_);
      return 0;
    } catch (Exception e) {
      return Fail(state, EIO, e.Message);
    }
  }

  static int GetNext(CArrowArrayStream* stream, CArrowArray* out_) {
    var state = State(stream);
    try {
      RecordBatch batch;
      if (!state.FirstTaken) {
        batch = state.First;
        state.FirstTaken = true;
      } else if (state.Batches.MoveNext()) {
        batch = state.Batches.Current;
        if (batch == null) return Fail(state, EINVAL, "a null record batch");
        SameSchema(state.First, batch);
      } else {
        *out_ = default(CArrowArray); // release NULL: the end of the stream
        return 0;
      }
      ExportBatch(batch, out_);
      return 0;
    } catch (ArgumentException e) {
      return Fail(state, EINVAL, e.Message);
    } catch (Exception e) {
      return Fail(state, EIO, e.GetType().Name + ": " + e.Message);
    }
  }

  static IntPtr GetLastError(CArrowArrayStream* stream) { return State(stream).LastError; }

  static void ReleaseStream(CArrowArrayStream* stream) {
    if (stream->release == IntPtr.Zero) return;
    var handle = GCHandle.FromIntPtr(stream->private_data);
    var state = (StreamState)handle.Target;
    try {
      state.Batches.Dispose();
    } catch (Exception) {
      // a throwing enumerator cannot fail a release
    }
    state.Error.Free();
    handle.Free();
    stream->release = IntPtr.Zero;
    stream->private_data = IntPtr.Zero;
  }

  static void SameSchema(RecordBatch first, RecordBatch batch) {
    var a = first.Columns;
    var b = batch.Columns;
    bool same = a.Count == b.Count;
    for (int i = 0; same && i < a.Count; i++) same = a[i].Name == b[i].Name && a[i].Format == b[i].Format;
    if (!same) throw new ArgumentException("a record batch's columns differ from the first batch's");
  }

  static void ExportSchema(RecordBatch template, CArrowSchema* out_) {
    var blocks = new NativeBlocks();
    int n = template.Columns.Count;
    var children = (CArrowSchema**)blocks.Alloc(n * sizeof(CArrowSchema*));
    var structs = (CArrowSchema*)blocks.Alloc(n * sizeof(CArrowSchema));
    for (int i = 0; i < n; i++) {
      var column = template.Columns[i];
      var own = new NativeBlocks();
      children[i] = &structs[i];
      structs[i].format = own.Utf8(column.Format);
      structs[i].name = own.Utf8(column.Name);
      structs[i].flags = FlagNullable;
      structs[i].release = releaseSchemaPtr;
      structs[i].private_data = own.Handle();
    }
    *out_ = default(CArrowSchema);
    out_->format = blocks.Utf8("+s");
    out_->name = blocks.Utf8("");
    out_->n_children = n;
    out_->children = children;
    out_->release = releaseSchemaPtr;
    out_->private_data = blocks.Handle();
  }

  static void ReleaseSchema(CArrowSchema* schema) {
    try {
      if (schema->release == IntPtr.Zero) return;
      for (long i = 0; i < schema->n_children; i++) {
        if (schema->children[i]->release != IntPtr.Zero) ReleaseSchema(schema->children[i]);
      }
      NativeBlocks.FreeHandle(schema->private_data);
      schema->release = IntPtr.Zero;
    } catch (Exception) {
      // nothing may cross back into native code
    }
  }

  static void ExportBatch(RecordBatch batch, CArrowArray* out_) {
    var blocks = new NativeBlocks();
    int n = batch.Columns.Count;
    var children = (CArrowArray**)blocks.Alloc(n * sizeof(CArrowArray*));
    var structs = (CArrowArray*)blocks.Alloc(n * sizeof(CArrowArray));
    var buffers = (void**)blocks.Alloc(sizeof(void*)); // a struct array has no validity
    try {
      for (int i = 0; i < n; i++) {
        children[i] = &structs[i];
        ExportColumn(batch.Columns[i], &structs[i]);
      }
    } catch (Exception) {
      for (int i = 0; i < n; i++) {
        if (structs[i].release != IntPtr.Zero) ReleaseArray(&structs[i]);
      }
      blocks.Free();
      throw;
    }
    *out_ = default(CArrowArray);
    out_->length = batch.Length;
    out_->n_buffers = 1;
    out_->buffers = buffers;
    out_->n_children = n;
    out_->children = children;
    out_->release = releaseArrayPtr;
    out_->private_data = blocks.Handle();
  }

  static void ExportColumn(Column column, CArrowArray* out_) {
    var own = new NativeBlocks();
    int n = column.Length;
    long nulls = 0;
    IntPtr validity = IntPtr.Zero;
    for (int i = 0; i < n; i++) {
      if (column.IsNull(i)) nulls++;
    }
    if (nulls > 0) {
      validity = own.Alloc((n + 7) / 8);
      var bits = (byte*)validity;
      for (int i = 0; i < n; i++) {
        if (!column.IsNull(i)) bits[i / 8] |= (byte)(1 << (i % 8));
      }
    }
    var buffers = (void**)own.Alloc(3 * sizeof(void*));
    buffers[0] = (void*)validity;
    long nBuffers = 2;
    var strings = column as StringColumn;
    if (strings != null) {
      var offsets = (int*)own.Alloc((n + 1) * 4L);
      var encoded = new byte[n][];
      long total = 0;
      for (int i = 0; i < n; i++) {
        encoded[i] = strings.Values[i] == null ? new byte[0] : Encoding.UTF8.GetBytes(strings.Values[i]);
        total += encoded[i].Length;
        if (total > int.MaxValue) throw new ArgumentException("column '" + column.Name + "': over 2 GiB of text");
        offsets[i + 1] = (int)total;
      }
      var data = own.Alloc(total);
      for (int i = 0; i < n; i++) {
        Marshal.Copy(encoded[i], 0, data + offsets[i], encoded[i].Length);
      }
      buffers[1] = offsets;
      buffers[2] = (void*)data;
      nBuffers = 3;
    } else if (column is Int64Column) {
      var data = own.Alloc(n * 8L);
      Marshal.Copy(((Int64Column)column).Values, 0, data, n);
      buffers[1] = (void*)data;
    } else if (column is DoubleColumn) {
      var data = own.Alloc(n * 8L);
      Marshal.Copy(((DoubleColumn)column).Values, 0, data, n);
      buffers[1] = (void*)data;
    } else if (column is Date32Column) {
      var data = own.Alloc(n * 4L);
      Marshal.Copy(((Date32Column)column).Days, 0, data, n);
      buffers[1] = (void*)data;
    } else if (column is TimestampColumn) {
      var data = own.Alloc(n * 8L);
      Marshal.Copy(((TimestampColumn)column).Microseconds, 0, data, n);
      buffers[1] = (void*)data;
    } else {
      own.Free();
      throw new ArgumentException("column '" + column.Name + "': unsupported column class " +
                                  column.GetType().Name);
    }
    *out_ = default(CArrowArray);
    out_->length = n;
    out_->null_count = nulls;
    out_->n_buffers = nBuffers;
    out_->buffers = buffers;
    out_->release = releaseArrayPtr;
    out_->private_data = own.Handle();
  }

  static void ReleaseArray(CArrowArray* array) {
    try {
      if (array->release == IntPtr.Zero) return;
      for (long i = 0; i < array->n_children; i++) {
        if (array->children[i]->release != IntPtr.Zero) ReleaseArray(array->children[i]);
      }
      NativeBlocks.FreeHandle(array->private_data);
      array->release = IntPtr.Zero;
    } catch (Exception) {
      // nothing may cross back into native code
    }
  }
}

}
