// The C# binding's tests: a small self-contained runner (no NuGet). Every public static
// method of Tests named Test* runs; the exit status is the number of failures.
//
//   LD_LIBRARY_PATH=OUT:LIB mono OUT/TfTrainTests.exe [TINY_YAML]
using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Threading;
using TfTrain;

static class Check {
  public static void True(bool condition, string what) {
    if (!condition) throw new Exception("check failed: " + what);
  }

  public static void Equal<T>(T expected, T actual, string what) {
    if (!EqualityComparer<T>.Default.Equals(expected, actual)) {
      throw new Exception(string.Format("{0}: expected {1}, got {2}", what, expected, actual));
    }
  }

  public static TftException Throws(Status status, string fragment, Action action) {
    try {
      action();
    } catch (TftException e) {
      if (e.Status != status) {
        throw new Exception(string.Format("expected {0}, got {1}: {2}", status, e.Status, e.Message));
      }
      if (!e.Message.Contains(fragment)) {
        throw new Exception(string.Format("message \"{0}\" lacks \"{1}\"", e.Message, fragment));
      }
      return e;
    }
    throw new Exception("expected TftException " + status + ", nothing was thrown");
  }

  public static void Throws<E>(Action action) where E : Exception {
    try {
      action();
    } catch (E) {
      return;
    }
    throw new Exception("expected " + typeof(E).Name + ", nothing was thrown");
  }
}

static partial class Tests {
  public static string TinyPath;

  static readonly List<string> tempDirs = new List<string>();

  static string TempDir() {
    string dir = Path.Combine(Path.GetTempPath(), "tftrain-cs-" + Guid.NewGuid().ToString("N"));
    Directory.CreateDirectory(dir);
    tempDirs.Add(dir);
    return dir;
  }

  public static void Cleanup() {
    foreach (var d in tempDirs) {
      try { Directory.Delete(d, true); } catch (Exception) { }
    }
  }

  static Config Tiny() {
    var cfg = Config.Load(TinyPath);
    cfg.Set("output.directory", TempDir());
    return cfg;
  }

  // TFT_ERROR_OUT_OF_MEMORY is .NET's out-of-memory kind, with the library's status; every other
  // status a TftException.
  public static void TestOutOfMemoryIsDotNetsKind() {
    Exception oom = TftException.ForStatus(Status.OutOfMemory, "out of memory while training");
    Check.True(oom is OutOfMemoryException, "an OutOfMemoryException");
    var typed = (TftOutOfMemoryException)oom;
    Check.Equal(Status.OutOfMemory, typed.Status, "status");
    Check.Equal("ERROR_OUT_OF_MEMORY", typed.StatusName, "status name");
    Check.Equal("out of memory while training", typed.Message, "message");
    Exception config = TftException.ForStatus(Status.Config, "bad key");
    Check.True(config is TftException && ((TftException)config).Status == Status.Config,
               "a TftException for another status");
  }

  public static void TestVersion() {
    Check.Equal(string.Format("{0}.{1}.{2}", Library.VersionMajor, Library.VersionMinor,
                              Library.VersionPatch), Library.Version, "version");
    Check.Equal(Library.VersionMajor * 10000 + Library.VersionMinor * 100 + Library.VersionPatch,
                Library.ApiVersion, "api version (the packed version)");
    Check.Equal("ERROR_CONFIG", Library.StatusName(Status.Config), "status name");
    Check.Equal("OK", Library.StatusName(Status.Ok), "status name");
  }

  delegate CheckpointConfig Make();

  struct Row {
    public string Label; public Make Make; public long N, I; public bool Should;
    public double Savings, Overhead;
    public Row(string label, Make make, long n, long i, bool should, double savings, double overhead) {
      Label = label; Make = make; N = n; I = i; Should = should; Savings = savings; Overhead = overhead;
    }
  }

  // The estimates' table of tests/capi/test_capi_checkpoint.c.
  public static void TestEstimateFormulas() {
    Make u2 = () => CheckpointConfig.Uniform(2), u3 = () => CheckpointConfig.Uniform(3);
    Make u0 = () => CheckpointConfig.Uniform(0), s03 = () => CheckpointConfig.Selective(0, 3);
    Make sEmpty = () => CheckpointConfig.Selective();
    Make d10 = () => CheckpointConfig.Dynamic(10, 0.35);
    Make d6min4 = () => { var c = CheckpointConfig.Dynamic(6, 0.3); c.MinInterval = 4; return c; };
    Make none = CheckpointConfig.None;
    var rows = new[] {
      new Row("uniform(2) n6 i0", u2, 6, 0, true, 1.0 - 3.0 / 6.0, 1.0 + 1.0 / 6.0),
      new Row("uniform(2) n6 i1", u2, 6, 1, false, 1.0 - 3.0 / 6.0, 1.0 + 1.0 / 6.0),
      new Row("uniform(2) n6 i4", u2, 6, 4, true, 1.0 - 3.0 / 6.0, 1.0 + 1.0 / 6.0),
      new Row("uniform(3) n7 i3", u3, 7, 3, true, 1.0 - 3.0 / 7.0, 1.0 + 1.0 / 7.0),
      new Row("uniform(3) n7 i5", u3, 7, 5, false, 1.0 - 3.0 / 7.0, 1.0 + 1.0 / 7.0),
      new Row("uniform(3) n3 (k >= n)", u3, 3, 0, true, 0.0, 1.0),
      new Row("uniform(2) n1 (k >= n)", u2, 1, 0, true, 0.0, 1.0),
      new Row("uniform(0)", u0, 6, 0, false, 0.0, 1.0),
      new Row("selective{0,3} n6 i3", s03, 6, 3, true, 1.0 - 2.0 / 6.0, 1.0 + 1.0 / 6.0),
      new Row("selective{0,3} n6 i2", s03, 6, 2, false, 1.0 - 2.0 / 6.0, 1.0 + 1.0 / 6.0),
      new Row("selective{0,3} n10 i0", s03, 10, 0, true, 1.0 - 2.0 / 10.0, 1.0 + 2.0 / 10.0),
      new Row("selective{} n6", sEmpty, 6, 0, false, 0.0, 1.0),
      new Row("dynamic(10,0.35) i3", d10, 10, 3, true, 1.0 - 0.35, 1.0 + 0.65 * 0.3),
      new Row("dynamic(10,0.35) i4", d10, 10, 4, false, 1.0 - 0.35, 1.0 + 0.65 * 0.3),
      new Row("dynamic(6,0.3)+min4 i4", d6min4, 6, 4, true, 1.0 - 0.3, 1.0 + 0.7 * 0.3),
      new Row("dynamic(6,0.3)+min4 i1", d6min4, 6, 1, false, 1.0 - 0.3, 1.0 + 0.7 * 0.3),
      new Row("none", none, 6, 0, false, 0.0, 1.0),
    };
    foreach (var row in rows) {
      using (var c = row.Make()) {
        bool should = c.ShouldCheckpoint(row.I);
        double savings = c.MemorySavings(row.N), overhead = c.ComputeOverhead(row.N);
        if (should != row.Should || Math.Abs(savings - row.Savings) > 1e-12 ||
            Math.Abs(overhead - row.Overhead) > 1e-12) {
          throw new Exception(string.Format(
              "{0}: got should={1} savings={2:R} overhead={3:R}, want {4} {5:R} {6:R}", row.Label,
              should, savings, overhead, row.Should, row.Savings, row.Overhead));
        }
      }
    }
  }

  public static void TestFlagsAndValidation() {
    using (var c = CheckpointConfig.None()) {
      Check.Equal(false, c.CheckpointAttention, "none attention");
      Check.Equal(false, c.CheckpointFfn, "none ffn");
      Check.Equal(1L, c.MinInterval, "none min interval");
      Check.Equal(CheckpointStrategy.None, c.Strategy, "none strategy");
    }
    using (var c = CheckpointConfig.Dynamic(6, 0.5)) {
      Check.Equal(CheckpointStrategy.Dynamic, c.Strategy, "strategy");
      Check.Equal(true, c.CheckpointAttention, "dynamic attention");
      c.CheckpointAttention = false;
      c.CheckpointFfn = false;
      using (var copy = c.Clone()) {
        Check.Equal(false, copy.CheckpointAttention, "clone attention");
        Check.Equal(false, copy.CheckpointFfn, "clone ffn");
        copy.Validate();
        copy.MinInterval = 0;
        Check.Throws(Status.Config, "checkpoint.min_checkpoint_interval: must be at least 1 (got 0)",
                     copy.Validate);
      }
    }
    Check.Throws(Status.Config, "checkpoint.num_layers: must be at least 1 (got 0)",
                  () => CheckpointConfig.Dynamic(0, 0.5));
    Check.Throws(Status.Config, "(got 1.5)", () => CheckpointConfig.Dynamic(6, 1.5));
    Check.Throws(Status.Config, "(got nan)", () => CheckpointConfig.Dynamic(6, double.NaN));
    Check.Throws<ArgumentOutOfRangeException>(() => CheckpointConfig.Uniform(-1));
    using (var c = CheckpointConfig.Uniform(0)) {
      Check.Throws(Status.Config, "checkpoint.interval: must be at least 1 (got 0)", c.Validate);
    }
    using (var c = CheckpointConfig.Selective(1, 1)) {
      Check.Throws(Status.Config, "duplicate index 1", c.Validate);
    }
  }

  public static void TestSummaryYamlJson() {
    using (var c = CheckpointConfig.Dynamic(6, 0.3)) {
      Check.Equal("Dynamic checkpointing (6 layers, 30.0% memory target)", c.Summary(), "summary");
    }
    using (var c = CheckpointConfig.Uniform(2)) {
      Check.Equal("Uniform checkpointing every 2 layers", c.Summary(), "summary");
    }
    using (var c = CheckpointConfig.Selective(0, 3)) {
      c.CheckpointFfn = false;
      string yaml = c.ToYaml();
      Check.True(yaml.Contains("strategy: selective"), "yaml has the strategy: " + yaml);
      using (var back = CheckpointConfig.FromYaml(yaml)) {
        Check.Equal(CheckpointStrategy.Selective, back.Strategy, "yaml strategy");
        Check.True(back.ShouldCheckpoint(3), "yaml layer 3");
        Check.Equal(false, back.CheckpointFfn, "yaml ffn");
      }
      using (var back = CheckpointConfig.FromJson(c.ToJson())) {
        Check.True(back.ShouldCheckpoint(0), "json layer 0");
      }
    }
    var e = Check.Throws(Status.Config, "unknown key 'intervall'",
                         () => CheckpointConfig.FromYaml("strategy: uniform\ninterval: 2\nintervall: 3\n"));
    Check.True(e.Message.Contains("line 3"), "line number in " + e.Message);
    Check.Throws(Status.Config, "", () => CheckpointConfig.FromYaml("strategy: [unclosed\n"));
    Check.Throws(Status.Config, "checkpoint.strategy", () => CheckpointConfig.FromJson("{\"strategy\": 3}"));
    Check.Throws(Status.Config, "", () => CheckpointConfig.FromJson("{not json"));
  }

  public static void TestMisuseAfterDispose() {
    var c = CheckpointConfig.Uniform(2);
    c.Dispose();
    c.Dispose(); // a second Dispose does nothing
    Check.Throws<ObjectDisposedException>(() => c.ShouldCheckpoint(0));
    Check.Throws<ObjectDisposedException>(() => { var s = c.Strategy; });
    var cfg = Tiny();
    cfg.Dispose();
    cfg.Dispose();
    Check.Throws<ObjectDisposedException>(() => cfg.Set("training.epochs", "1"));
    Check.Throws<ObjectDisposedException>(() => new Trainer(cfg));
    using (var cfg2 = Tiny()) {
      Check.Throws<ObjectDisposedException>(() => cfg2.Checkpoint = c);
    }
    Check.Throws<ArgumentNullException>(() => new Trainer(null));
  }

  public static void TestConfig() {
    using (var cfg = Tiny()) {
      Check.Equal("2", cfg.Get("training.epochs"), "epochs");
      cfg.Set("training.epochs", "3");
      Check.Equal("3", cfg.Get("training.epochs"), "epochs after Set");
      Check.Throws(Status.Config, "training.epochs", () => cfg.Set("training.epochs", "ten"));
      Check.Throws(Status.Config, "epoch", () => cfg.Set("training.epoch", "1"));
      Check.Throws<ArgumentException>(() => cfg.Set("training.epochs", "3\0"));
      Check.Throws<ArgumentNullException>(() => cfg.Set("training.epochs", null));
      Check.Throws(Status.Config, "", () => cfg.Get("no.such.key"));
      using (var cp = CheckpointConfig.Uniform(2)) cfg.Checkpoint = cp;
      using (var back = cfg.Checkpoint) Check.Equal(CheckpointStrategy.Uniform, back.Strategy, "strategy");
      cfg.Validate();
      using (var again = Config.Parse(cfg.ToYaml())) {
        Check.Equal("3", again.Get("training.epochs"), "round trip");
      }
      using (var clone = cfg.Clone()) Check.Equal("3", clone.Get("training.epochs"), "clone");
    }
  }

  public static void TestBadConfig() {
    var e = Check.Throws(Status.Config, "training.epochs",
                         () => Config.Parse("data:\n  path: x.csv\ntraining:\n  epochs: ten\n"));
    Check.Equal("ERROR_CONFIG", e.StatusName, "status name");
    Check.Throws(Status.Io, "", () => Config.Load(Path.Combine(TempDir(), "missing.yaml")));
    string bad = Path.Combine(TempDir(), "bad.yaml");
    File.WriteAllText(bad, "windows:\n  encoder_length: 4\n  prediction_length: 2\ntraining:\n  epoch: 3\n");
    Check.Throws(Status.Config, "bad.yaml:", () => Config.Load(bad));
  }

  public static void TestTrainProgressAndCancel() {
    using (var cfg = Tiny())
    using (var trainer = new Trainer(cfg)) {
      int steps = 0, epochs = 0;
      long lastEpoch = 0, lastStep = 0;
      string problem = null;
      trainer.Progress = p => {
        if (p.Kind == ProgressKind.Step) {
          if (p.Epoch < lastEpoch || (p.Epoch == lastEpoch && p.Step <= lastStep)) {
            problem = string.Format("progress went back: {0}/{1} after {2}/{3}", p.Epoch, p.Step,
                                    lastEpoch, lastStep);
          }
          lastEpoch = p.Epoch;
          lastStep = p.Step;
          steps++;
        } else {
          epochs++;
          if (double.IsNaN(p.ValidationLoss)) problem = "epoch record without validation loss";
        }
        GC.Collect(); // the delegate must survive collections while native code holds it
        return false;
      };
      var report = trainer.Train();
      Check.True(problem == null, problem);
      Check.Equal(2L, report.EpochsRun, "epochs run");
      Check.Equal(2, epochs, "epoch records");
      Check.True(steps >= 2, "step records");
      Check.True(report.FinalValidationLoss > 0 && !double.IsInfinity(report.FinalValidationLoss),
                 "final validation loss");
      Check.True(report.Memory.NumUnits > 0, "memory report units");
      Check.True(report.Validation.Windows > 0 &&
                 Math.Abs(report.Validation.Loss - report.BestValidationLoss) < 1e-12,
                 "report validation metrics");
      Check.True(report.PeakActivationBytes > 0, "report summary");
      var measured = trainer.MeasureMemory();
      Check.True(measured.NumUnits == report.Memory.NumUnits && measured.CheckpointedPeakBytes > 0,
                 "measure memory");
      var m = trainer.Evaluate();
      Check.True(m.Windows > 0 && m.Loss > 0, "evaluate");

      int calls = 0;
      trainer.Progress = p => ++calls >= 3;
      Check.Throws(Status.Cancelled, "", () => trainer.Train());
      Check.Equal(3, calls, "callback calls before cancel");

      trainer.Progress = p => { throw new InvalidOperationException("boom"); };
      try {
        trainer.Train();
        throw new Exception("Train did not rethrow the callback's exception");
      } catch (InvalidOperationException e) {
        Check.Equal("boom", e.Message, "rethrown exception");
      }

      trainer.Progress = null;
      trainer.Cancel();
      Check.Throws(Status.Cancelled, "", () => trainer.Train());

      // Cancel from another thread while training.
      var started = new ManualResetEvent(false);
      trainer.Progress = p => { started.Set(); Thread.Sleep(20); return false; };
      var canceller = new Thread(() => { started.WaitOne(); trainer.Cancel(); });
      canceller.Start();
      Check.Throws(Status.Cancelled, "", () => trainer.Train());
      canceller.Join();

      trainer.Dispose();
      trainer.Dispose();
      Check.Throws<ObjectDisposedException>(() => trainer.Train());
      Check.Throws<ObjectDisposedException>(trainer.Cancel);
    }
  }

  // Misuse during training: other members throw from the callback; Dispose cancels and the
  // trainer is released when Train returns.
  public static void TestDisposeDuringTrain() {
    using (var cfg = Tiny()) {
      var trainer = new Trainer(cfg);
      Exception reentrant = null;
      int calls = 0;
      trainer.Progress = p => {
        if (++calls == 1) {
          try { trainer.Evaluate(); } catch (Exception e) { reentrant = e; }
          trainer.Dispose();
        }
        return false;
      };
      Check.Throws(Status.Cancelled, "", () => trainer.Train());
      Check.True(reentrant is InvalidOperationException, "Evaluate from the callback: " + reentrant);
      Check.Throws<ObjectDisposedException>(() => trainer.Train());
      trainer.Dispose();
    }
  }

  public static void TestPredictSaveAndModel() {
    using (var cfg = Tiny()) {
      cfg.Set("training.epochs", "1");
      using (var trainer = new Trainer(cfg)) {
        trainer.Train();
        using (var preds = trainer.Predict()) {
          long f = preds.Forecasts;
          Check.True(f > 0, "forecasts");
          Check.Equal(7L, preds.Horizon, "horizon");
          Check.Equal(3L, preds.QuantileCount, "quantiles");
          var levels = preds.Quantiles();
          Check.Equal(0.5, levels[1], "median level");
          Check.Equal(f * 7 * 3, (long)preds.Values().Length, "values");
          Check.Equal(f * 7, (long)preds.Actuals().Length, "actuals");
          Check.Equal(f * 7, (long)preds.Times().Length, "times");
          var info = preds.Info(f - 1);
          Check.True(info.IsFuture, "last forecast is the future window");
          Check.True(preds.SeriesName(info.Series).Length > 0, "series name");
          Check.Throws(Status.InvalidArgument, "", () => preds.Info(f));
          string dir = TempDir();
          preds.WriteCsv(Path.Combine(dir, "forecast.csv"));
          trainer.PredictCsv(Path.Combine(dir, "forecast2.csv"));
          trainer.Save(Path.Combine(dir, "model"));
          using (var model = new Model(Path.Combine(dir, "model")))
          using (var p2 = model.Predict()) {
            Check.Equal(f, p2.Forecasts, "model forecasts");
          }
          Check.True(File.Exists(Path.Combine(dir, "forecast.csv")), "forecast.csv written");
        }
      }
    }
  }

  // A refit (training.init_from, docs/refit.md) starts from the saved model: its first
  // validation loss is the saved model's, on the same data. A key that contradicts the saved
  // architecture is a config error naming it.
  public static void TestRefit() {
    string first = TempDir();
    double best;
    using (var cfg = Tiny()) {
      cfg.Set("output.directory", first);
      using (var trainer = new Trainer(cfg)) best = trainer.Train().BestValidationLoss;
    }
    using (var cfg = Tiny()) {
      cfg.Set("training.init_from", Path.Combine(first, "model"));
      using (var trainer = new Trainer(cfg)) {
        var report = trainer.Train();
        Check.Equal(best, report.InitialValidationLoss, "refit's first validation loss");
      }
      Check.True(File.ReadAllText(Path.Combine(cfg.Get("output.directory"), "summary.json"))
                     .Contains("\"init_from\""), "summary.json names the saved model");
      cfg.Set("model.hidden_size", "16");
      Check.Throws(Status.Config, "model.hidden_size is 16 here but 8", () => new Trainer(cfg));
    }
  }

  // A Parquet copy of the tiny data (TFTRAIN_TINY_PARQUET, written by ctest's fixture with
  // scripts/csv_to_parquet.py) trains the same model as the CSV, and a saved model reads it.
  public static void TestParquetTrainsLikeCsv() {
    var parquet = Environment.GetEnvironmentVariable("TFTRAIN_TINY_PARQUET");
    if (string.IsNullOrEmpty(parquet)) {
      Console.WriteLine("SKIP TestParquetTrainsLikeCsv: TFTRAIN_TINY_PARQUET is not set");
      return;
    }
    double fromCsv, fromParquet;
    var dir = Path.Combine(TempDir(), "model");
    using (var cfg = Tiny()) {
      cfg.Set("training.epochs", "1");
      using (var trainer = new Trainer(cfg)) {
        fromCsv = trainer.Train().FinalValidationLoss;
        trainer.Save(dir);
      }
      cfg.Set("data.path", parquet);
      using (var trainer = new Trainer(cfg)) fromParquet = trainer.Train().FinalValidationLoss;
    }
    Check.True(fromCsv == fromParquet,
               string.Format("final validation loss: csv {0:R}, parquet {1:R}", fromCsv, fromParquet));
    using (var model = new Model(dir))
    using (var predictions = model.Predict(parquet)) {
      Check.True(predictions.Forecasts > 0, "forecasts from the Parquet file");
    }
  }

  public static void TestFinalizers() {
    for (int i = 0; i < 100; i++) CheckpointConfig.Uniform(2);
    GC.Collect();
    GC.WaitForPendingFinalizers();
  }
}

static class Program {
  static int Main(string[] args) {
    Tests.TinyPath = args.Length > 0 ? args[0]
        : Environment.GetEnvironmentVariable("TFTRAIN_TINY_CONFIG")
          ?? Path.Combine(AppDomain.CurrentDomain.BaseDirectory, "../../../examples/configs/tiny.yaml");
    int passed = 0, failed = 0;
    foreach (var m in typeof(Tests).GetMethods(BindingFlags.Public | BindingFlags.Static)) {
      if (!m.Name.StartsWith("Test")) continue;
      try {
        m.Invoke(null, null);
        Console.WriteLine("PASS " + m.Name);
        passed++;
      } catch (TargetInvocationException e) {
        Console.WriteLine("FAIL " + m.Name + ": " + e.InnerException);
        failed++;
      }
    }
    Tests.Cleanup();
    Console.WriteLine(string.Format("{0} passed, {1} failed", passed, failed));
    return failed;
  }
}
