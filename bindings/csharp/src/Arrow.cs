// Columns and record batches, which cross to the library through the Arrow C Data Interface
// (ArrowC.cs, ArrowExport.cs, ArrowImport.cs: ArrowSchema, ArrowArray,
// ArrowArrayStream: https://arrow.apache.org/docs/format/CDataInterface.html and
// CStreamInterface.html) between them and the library.
//
// Hand-written on purpose: the binding builds with Debian's mono (mcs) and no NuGet, and
// Apache.Arrow (Apache.Arrow.C's CArrowArrayStreamExporter/Importer) is not packaged by Debian.
// It covers only what tftrain reads and writes: the column types below, as one struct array per
// batch. A host that has Apache.Arrow exports its IArrowArrayStream to a C struct itself
// (CArrowArrayStreamExporter.ExportArrayStream) and hands that over with
// Data.FromArrowStream(IntPtr); the forecasts' C stream (Predictions.ToArrowStream) imports
// with CArrowArrayStreamImporter the same way.
using System;
using System.Collections.Generic;

namespace TfTrain.Arrow {

/// <summary>One named column of a record batch; validity null means no nulls.</summary>
public abstract class Column {
  readonly bool[] valid;

  protected Column(string name, int length, bool[] valid) {
    if (name == null) throw new ArgumentNullException("name");
    if (valid != null && valid.Length != length) {
      throw new ArgumentException("validity has " + valid.Length + " entries, the column " + length,
                                  "valid");
    }
    Name = name;
    Length = length;
    this.valid = valid;
  }

  public string Name { get; private set; }
  public int Length { get; private set; }

  public bool IsNull(int i) { return valid != null && !valid[i]; }

  /// <summary>The column's Arrow C format string ("l", "g", "u", "tdD", "tsu:UTC", ...).</summary>
  public abstract string Format { get; }
}

/// <summary>utf8 strings; a null element is a null.</summary>
public sealed class StringColumn : Column {
  public StringColumn(string name, string[] values)
      : base(name, values.Length, Array.ConvertAll(values, v => v != null)) {
    Values = values;
  }
  public string[] Values { get; private set; }
  public override string Format { get { return "u"; } }
}

/// <summary>int64.</summary>
public sealed class Int64Column : Column {
  public Int64Column(string name, long[] values, bool[] valid = null)
      : base(name, values.Length, valid) {
    Values = values;
  }
  public long[] Values { get; private set; }
  public override string Format { get { return "l"; } }
}

/// <summary>float64 (NaN is a value; the library reads it as missing).</summary>
public sealed class DoubleColumn : Column {
  public DoubleColumn(string name, double[] values, bool[] valid = null)
      : base(name, values.Length, valid) {
    Values = values;
  }
  public double[] Values { get; private set; }
  public override string Format { get { return "g"; } }
}

/// <summary>date32: days since 1970-01-01.</summary>
public sealed class Date32Column : Column {
  public Date32Column(string name, int[] days, bool[] valid = null) : base(name, days.Length, valid) {
    Days = days;
  }
  public int[] Days { get; private set; }
  public DateTime Date(int i) { return Epoch.AddDays(Days[i]); }
  public override string Format { get { return "tdD"; } }
  internal static readonly DateTime Epoch = new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc);
}

/// <summary>timestamp[us]: microseconds since 1970-01-01T00:00:00, with a time zone ("UTC") or
/// none ("").</summary>
public sealed class TimestampColumn : Column {
  public TimestampColumn(string name, long[] microseconds, string timeZone = "", bool[] valid = null)
      : base(name, microseconds.Length, valid) {
    Microseconds = microseconds;
    TimeZone = timeZone ?? "";
  }
  public long[] Microseconds { get; private set; }
  public string TimeZone { get; private set; }
  public override string Format { get { return "tsu:" + TimeZone; } }
}

/// <summary>Columns of one length: a batch of rows.</summary>
public sealed class RecordBatch {
  readonly Column[] columns;

  public RecordBatch(params Column[] columns) {
    if (columns == null || columns.Length == 0) throw new ArgumentException("no columns", "columns");
    foreach (var c in columns) {
      if (c.Length != columns[0].Length) {
        throw new ArgumentException("column '" + c.Name + "' has " + c.Length + " rows, '" +
                                    columns[0].Name + "' " + columns[0].Length, "columns");
      }
    }
    this.columns = (Column[])columns.Clone();
  }

  public IList<Column> Columns { get { return Array.AsReadOnly(columns); } }
  public int Length { get { return columns[0].Length; } }

  /// <summary>The column named `name`; KeyNotFoundException when there is none.</summary>
  public Column Column(string name) {
    foreach (var c in columns) {
      if (c.Name == name) return c;
    }
    throw new KeyNotFoundException("no column '" + name + "'");
  }
}

}
