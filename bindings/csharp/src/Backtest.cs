using System.Collections.Generic;

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
  /// backtest.json and backtest.svg under output.directory. Reports no progress.</summary>
  public static BacktestReport Run(Config config) {
    using (var raw = new Swig.BacktestReport(config.Raw))
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
