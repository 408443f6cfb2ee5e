// --memory: the data file read into columns (TfTrain.Arrow record batches), to train from
// memory. Apache.Arrow has no CSV reader, and the binding uses no NuGet, so the runner reads
// the CSV itself.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;
using TfTrain.Arrow;

static class CsvTable {
  const int BatchRows = 1 << 16;
  static readonly DateTime Epoch = new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc);
  static readonly string[] DateTimeFormats = {
    "yyyy-MM-ddTHH:mm:ss", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-ddTHH:mm:ss.FFFFFFF",
    "yyyy-MM-dd HH:mm:ss.FFFFFFF", "yyyy-MM-ddTHH:mm:ssK", "yyyy-MM-dd HH:mm:ssK",
    "yyyy-MM-ddTHH:mm:ss.FFFFFFFK", "yyyy-MM-dd HH:mm:ss.FFFFFFFK",
  };

  enum Kind { Int64, Double, Date, Timestamp, String }

  // One CSV record (RFC 4180: quoted fields may hold commas, quotes doubled, line breaks).
  static List<string> Record(TextReader reader) {
    int ch = reader.Read();
    if (ch < 0) return null;
    var fields = new List<string>();
    var field = new StringBuilder();
    bool quoted = false;
    for (; ; ch = reader.Read()) {
      if (quoted) {
        if (ch < 0) throw new InvalidDataException("an unterminated quoted field");
        if (ch == '"') {
          if (reader.Peek() == '"') {
            field.Append('"');
            reader.Read();
          } else {
            quoted = false;
          }
        } else {
          field.Append((char)ch);
        }
      } else if (ch == '"') {
        quoted = true;
      } else if (ch == ',') {
        fields.Add(field.ToString());
        field.Clear();
      } else if (ch < 0 || ch == '\n') {
        break;
      } else if (ch != '\r') {
        field.Append((char)ch);
      }
    }
    fields.Add(field.ToString());
    return fields;
  }

  static bool IsInt(string v) {
    long x;
    return long.TryParse(v, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out x);
  }

  static bool IsDouble(string v) {
    double x;
    return double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out x);
  }

  static bool IsDate(string v) {
    DateTime x;
    return DateTime.TryParseExact(v, "yyyy-MM-dd", CultureInfo.InvariantCulture,
                                  DateTimeStyles.None, out x);
  }

  static bool TryTimestamp(string v, out long micros, out bool zoned) {
    DateTimeOffset t;
    zoned = v.EndsWith("Z") || (v.Length > 19 && v.IndexOfAny(new[] { '+', '-' }, 19) >= 0);
    micros = 0;
    if (!DateTimeOffset.TryParseExact(v, DateTimeFormats, CultureInfo.InvariantCulture,
                                      DateTimeStyles.AssumeUniversal, out t)) {
      return false;
    }
    micros = (t.UtcTicks - Epoch.Ticks) / 10;
    return true;
  }

  // The column's type from all its non-empty cells, as examples/go/table.go chooses it:
  // int64, else float64, else date32 (ISO dates), else timestamp[us] (ISO date-times; "UTC"
  // when they carry an offset or Z), else utf8. Booleans stay text, as in the library's CSV.
  static Kind Infer(List<string[]> rows, int c, out bool zoned) {
    bool isInt = true, isDouble = true, isDate = true, isTime = true;
    zoned = false;
    foreach (var row in rows) {
      string v = row[c];
      if (v.Length == 0) continue;
      isInt = isInt && IsInt(v);
      isDouble = isDouble && IsDouble(v);
      isDate = isDate && IsDate(v);
      if (isTime) {
        long micros;
        bool z;
        isTime = TryTimestamp(v, out micros, out z);
        zoned = zoned || z;
      }
    }
    return isInt ? Kind.Int64 : isDouble ? Kind.Double : isDate ? Kind.Date
         : isTime ? Kind.Timestamp : Kind.String;
  }

  static Column MakeColumn(string name, Kind kind, bool zoned, List<string[]> rows, int c,
                           int start, int n) {
    var valid = new bool[n];
    bool nulls = false;
    for (int i = 0; i < n; i++) {
      valid[i] = rows[start + i][c].Length > 0;
      nulls = nulls || !valid[i];
    }
    if (!nulls) valid = null;
    var inv = CultureInfo.InvariantCulture;
    switch (kind) {
      case Kind.Int64: {
        var v = new long[n];
        for (int i = 0; i < n; i++) {
          if (valid == null || valid[i]) v[i] = long.Parse(rows[start + i][c], NumberStyles.AllowLeadingSign, inv);
        }
        return new Int64Column(name, v, valid);
      }
      case Kind.Double: {
        var v = new double[n];
        for (int i = 0; i < n; i++) {
          if (valid == null || valid[i]) v[i] = double.Parse(rows[start + i][c], NumberStyles.Float, inv);
        }
        return new DoubleColumn(name, v, valid);
      }
      case Kind.Date: {
        var v = new int[n];
        for (int i = 0; i < n; i++) {
          if (valid == null || valid[i]) {
            v[i] = (int)(DateTime.ParseExact(rows[start + i][c], "yyyy-MM-dd", inv,
                                             DateTimeStyles.AssumeUniversal |
                                             DateTimeStyles.AdjustToUniversal) - Epoch).TotalDays;
          }
        }
        return new Date32Column(name, v, valid);
      }
      case Kind.Timestamp: {
        var v = new long[n];
        for (int i = 0; i < n; i++) {
          bool z;
          if (valid == null || valid[i]) TryTimestamp(rows[start + i][c], out v[i], out z);
        }
        return new TimestampColumn(name, v, zoned ? "UTC" : "", valid);
      }
      default: {
        var v = new string[n];
        for (int i = 0; i < n; i++) v[i] = valid == null || valid[i] ? rows[start + i][c] : null;
        return new StringColumn(name, v);
      }
    }
  }

  /// <summary>Reads a CSV file (a header line, then rows) into record batches of up to 65536
  /// rows, typed by Infer; empty cells are nulls.</summary>
  public static List<RecordBatch> Load(string path) {
    var rows = new List<string[]>();
    string[] header;
    using (var reader = new StreamReader(path, Encoding.UTF8)) {
      var first = Record(reader);
      if (first == null) throw new InvalidDataException(path + ": empty");
      header = first.ToArray();
      for (var r = Record(reader); r != null; r = Record(reader)) {
        if (r.Count == 1 && r[0].Length == 0) continue; // a blank line
        if (r.Count != header.Length) {
          throw new InvalidDataException(string.Format("{0}:{1}: {2} fields, the header has {3}",
                                                       path, rows.Count + 2, r.Count, header.Length));
        }
        rows.Add(r.ToArray());
      }
    }
    if (rows.Count == 0) throw new InvalidDataException(path + ": no rows");
    var kinds = new Kind[header.Length];
    var zoned = new bool[header.Length];
    for (int c = 0; c < header.Length; c++) kinds[c] = Infer(rows, c, out zoned[c]);
    var batches = new List<RecordBatch>();
    for (int start = 0; start < rows.Count; start += BatchRows) {
      int n = Math.Min(BatchRows, rows.Count - start);
      var columns = new Column[header.Length];
      for (int c = 0; c < header.Length; c++) {
        columns[c] = MakeColumn(header[c], kinds[c], zoned[c], rows, c, start, n);
      }
      batches.Add(new RecordBatch(columns));
    }
    return batches;
  }
}
