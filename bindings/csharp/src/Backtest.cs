using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;

namespace TfTrain {

/// <summary>One fold's figures, or every fold's pooled: the model's and both baselines'.</summary>
public sealed class Forecasts {
  public Metrics Model { get; internal set; }
  public Metrics Naive { get; internal set; }
  public Metrics SeasonalNaive { get; internal set; } // Windows 0: not scored
}

/// <summary>A rolling-origin backtest of a config (tft_backtest_run, docs/backtest.md).</summary>
public sealed class BacktestReport {
  public long Folds { get; internal set; }             // backtest.folds
  public long FinishedFolds { get; internal set; }
  public long FoldsBeatingNaive { get; internal set; } // P50 q-risk below the naive forecast's
  public double IntervalCoverage { get; internal set; } // the model's, over every fold
  public double Seconds { get; internal set; }
  public Forecasts Overall { get; internal set; }       // every fold pooled
  public IReadOnlyList<Forecasts> PerFold { get; internal set; } // fold 1 first

  /// <summary>Runs the backtest `config` describes (backtest.folds, backtest.mode,
  /// backtest.refit_epochs) on data.path, writing each fold's run and backtest.csv,
  /// backtest.json and backtest.svg under output.directory. `progress` (null: none) is called
  /// on this thread after every step and epoch of every fold's training, with Fold and Folds
  /// set; returning true cancels (a TftException with Status.Cancelled; the folds finished stay
  /// on disk), and so does an exception it throws, which Run then rethrows.</summary>
  public static BacktestReport Run(Config config, Func<Progress, bool> progress = null) {
    if (config == null) throw new ArgumentNullException("config");
    Exception thrown = null;
    NativeProgressCallback callback = (pointer, user) => {
      try {
        return progress(Progress.From(pointer)) ? 1 : 0;
      } catch (Exception e) {
        thrown = e;  // never let an exception unwind through the native frames
        return 1;
      }
    };
    Swig.BacktestReport raw;
    try {
      raw = progress == null ? new Swig.BacktestReport(config.Raw)
                             : Swig.BacktestReport.Run(config.Raw, callback);
    } catch (TftException) {
      if (thrown != null) ExceptionDispatchInfo.Capture(thrown).Throw();
      throw;
    } finally {
      GC.KeepAlive(callback); // alive until the native call returns
    }
    using (raw)
    using (var s = new Swig.BacktestSummary()) {
      raw.GetSummary(s);
      var perFold = new List<Forecasts>();
      for (long fold = 1; fold <= s.finished_folds; fold++) perFold.Add(Read(raw, fold));
      return new BacktestReport {
        Folds = s.folds, FinishedFolds = s.finished_folds,
        FoldsBeatingNaive = s.folds_beating_naive, IntervalCoverage = s.interval_coverage,
        Seconds = s.seconds, Overall = Read(raw, 0), PerFold = perFold };
    }
  }

  static Forecasts Read(Swig.BacktestReport raw, long fold) {
    var metrics = new Metrics[3];
    for (int which = 0; which < 3; which++) {
      using (var m = new Swig.Metrics()) {
        raw.GetMetrics(fold, which, m);
        metrics[which] = Metrics.From(m);
      }
    }
    return new Forecasts { Model = metrics[0], Naive = metrics[1], SeasonalNaive = metrics[2] };
  }
}

}
