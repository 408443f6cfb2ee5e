// Data in memory (issue 29): tiny.yaml's CSV as record batches trains bitwise like the file,
// forecasts like it, and its stream is released once.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using TfTrain;
using TfTrain.Arrow;

static partial class Tests {
  static string TinyCsv() {
    return Path.Combine(Path.GetDirectoryName(Path.GetFullPath(TinyPath)), "..", "data",
                        "multiseries.csv");
  }

  // multiseries.csv as batches of `rows` rows, typed as pyarrow types it (csv_to_parquet.py);
  // `skip` names a column to leave out.
  static List<RecordBatch> TinyBatches(int rows, string skip = null) {
    var lines = File.ReadAllLines(TinyCsv());
    var header = lines[0].Split(',');
    var batches = new List<RecordBatch>();
    var epoch = new DateTime(1970, 1, 1);
    for (int start = 1; start < lines.Length; start += rows) {
      int n = Math.Min(rows, lines.Length - start);
      var cells = new string[n][];
      for (int i = 0; i < n; i++) cells[i] = lines[start + i].Split(',');
      var columns = new List<Column>();
      for (int c = 0; c < header.Length; c++) {
        int k = c;
        var text = cells.Select(r => r[k]).ToArray();
        switch (header[c]) {
          case "store": case "region":
            columns.Add(new StringColumn(header[c], text));
            break;
          case "date":
            columns.Add(new Date32Column(header[c], text.Select(v => (int)(DateTime.ParseExact(
                v, "yyyy-MM-dd", CultureInfo.InvariantCulture) - epoch).TotalDays).ToArray()));
            break;
          case "promo":
            columns.Add(new Int64Column(header[c], text.Select(v => long.Parse(v, CultureInfo.InvariantCulture)).ToArray()));
            break;
          default:
            columns.Add(new DoubleColumn(header[c], text.Select(v => double.Parse(v, CultureInfo.InvariantCulture)).ToArray()));
            break;
        }
      }
      batches.Add(new RecordBatch(columns.Where(col => col.Name != skip).ToArray()));
    }
    return batches;
  }

  // Batches whose enumerator counts its Dispose calls (the stream's release disposes it) and
  // may throw after `failAfter` batches.
  sealed class CountingBatches : IEnumerable<RecordBatch> {
    readonly List<RecordBatch> batches;
    readonly int failAfter;
    public int Disposed;
    public CountingBatches(List<RecordBatch> batches, int failAfter = -1) {
      this.batches = batches;
      this.failAfter = failAfter;
    }
    public IEnumerator<RecordBatch> GetEnumerator() { return new Enumerator(this); }
    IEnumerator IEnumerable.GetEnumerator() { return GetEnumerator(); }

    sealed class Enumerator : IEnumerator<RecordBatch> {
      readonly CountingBatches owner;
      int index = -1;
      public Enumerator(CountingBatches owner) { this.owner = owner; }
      public RecordBatch Current { get { return owner.batches[index]; } }
      object IEnumerator.Current { get { return Current; } }
      public bool MoveNext() {
        index++;
        if (index == owner.failAfter) throw new IOException("the source broke at batch " + index);
        return index < owner.batches.Count;
      }
      public void Reset() { index = -1; }
      public void Dispose() { owner.Disposed++; }
    }
  }

  public static void TestDataTrainsLikeFile() {
    TrainReport fromFile, fromMemory;
    string fileOut, memoryOut, model = Path.Combine(TempDir(), "model");
    using (var cfg = Tiny()) {
      fileOut = cfg.Get("output.directory").Trim('"');
      using (var trainer = new Trainer(cfg)) fromFile = trainer.Train();
    }
    using (var data = Data.FromRecordBatches(TinyBatches(1000))) {
      Check.Equal(13152L, data.NumRows, "rows");
      using (var cfg = Tiny()) {
        memoryOut = cfg.Get("output.directory").Trim('"');
        cfg.Set("data.path", Path.Combine(TempDir(), "absent.csv")); // nothing reads it
        using (var trainer = Trainer.FromData(cfg, data)) {
          fromMemory = trainer.Train();
          var forecastCsv = File.ReadAllLines(Path.Combine(fileOut, "forecast.csv"));
          using (var predictions = trainer.PredictData(data)) SameAsCsv(predictions, forecastCsv);
          trainer.Save(model);
          using (var saved = new Model(model))
          using (var predictions = saved.PredictData(data)) {
            SameAsCsv(predictions, forecastCsv);
          }
        }
      }
    }
    Check.Equal(BitConverter.DoubleToInt64Bits(fromFile.FinalValidationLoss),
                BitConverter.DoubleToInt64Bits(fromMemory.FinalValidationLoss),
                "final validation loss bits (file, memory)");
    Check.Equal(BitConverter.DoubleToInt64Bits(fromFile.FinalTrainLoss),
                BitConverter.DoubleToInt64Bits(fromMemory.FinalTrainLoss),
                "final train loss bits (file, memory)");
    Check.Equal(File.ReadAllText(Path.Combine(fileOut, "forecast.csv")),
                File.ReadAllText(Path.Combine(memoryOut, "forecast.csv")), "forecast.csv");
    var parquet = Environment.GetEnvironmentVariable("TFTRAIN_TINY_PARQUET");
    if (!string.IsNullOrEmpty(parquet)) {
      using (var cfg = Tiny()) {
        cfg.Set("data.path", parquet);
        using (var trainer = new Trainer(cfg)) {
          Check.Equal(BitConverter.DoubleToInt64Bits(fromMemory.FinalValidationLoss),
                      BitConverter.DoubleToInt64Bits(trainer.Train().FinalValidationLoss),
                      "final validation loss bits (memory, parquet)");
        }
      }
    }
  }

  // The forecasts as record batches hold forecast.csv's rows, cell by cell.
  static void SameAsCsv(Predictions predictions, string[] csv) {
    var batches = predictions.ToRecordBatches();
    var header = csv[0].Split(',');
    int row = 1;
    foreach (var batch in batches) {
      Check.Equal(header.Length, batch.Columns.Count, "columns");
      for (int c = 0; c < header.Length; c++) Check.Equal(header[c], batch.Columns[c].Name, "column name");
      for (int i = 0; i < batch.Length; i++, row++) {
        var cells = csv[row].Split(',');
        for (int c = 0; c < header.Length; c++) {
          var column = batch.Columns[c];
          string what = string.Format("row {0} column {1}", row, header[c]);
          if (column.IsNull(i)) {
            Check.Equal("", cells[c], what);
          } else if (column is StringColumn) {
            Check.Equal(cells[c], ((StringColumn)column).Values[i], what);
          } else if (column is Int64Column) {
            Check.Equal(cells[c], ((Int64Column)column).Values[i].ToString(CultureInfo.InvariantCulture), what);
          } else if (column is Date32Column) {
            Check.Equal(cells[c], ((Date32Column)column).Date(i).ToString("yyyy-MM-dd", CultureInfo.InvariantCulture), what);
          } else {
            double v = ((DoubleColumn)column).Values[i];
            Check.Equal(v, (double)(float)v, what + " is a float32 widened");
            Check.Equal(float.Parse(cells[c], CultureInfo.InvariantCulture), (float)v, what);
          }
        }
      }
    }
    Check.Equal(csv.Length, row, "forecast rows + 1");
  }

  public static void TestDataOwnership() {
    var noSales = new CountingBatches(TinyBatches(500, "sales"));
    using (var data = Data.FromRecordBatches(noSales)) {
      Check.Equal(1, noSales.Disposed, "the stream released once");
      using (var cfg = Tiny()) {
        Check.Throws(Status.Data, "'sales'", () => Trainer.FromData(cfg, data).Dispose());
      }
      data.Dispose();
      Check.Throws<ObjectDisposedException>(() => { var n = data.NumRows; });
    }
    var empty = new CountingBatches(new List<RecordBatch>());
    Check.Throws(Status.Data, "no record batches", () => Data.FromRecordBatches(empty));
    Check.Equal(1, empty.Disposed, "the empty stream released once");
    var broken = new CountingBatches(TinyBatches(1000), 3);
    Check.Throws(Status.Data, "the source broke at batch 3", () => Data.FromRecordBatches(broken));
    Check.Equal(1, broken.Disposed, "the failing stream released once");
    var mixed = TinyBatches(5000);
    mixed[1] = TinyBatches(5000, "promo")[1];
    Check.Throws(Status.Data, "differ from the first batch", () => Data.FromRecordBatches(mixed));
  }
}
