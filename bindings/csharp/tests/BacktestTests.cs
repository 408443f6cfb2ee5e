// Rolling-origin backtests (issue 42): every fold reported and pooled, progress with the fold
// it trains, and a cancel that keeps the finished folds.
using System;
using System.IO;
using TfTrain;

static partial class Tests {
  // tiny.yaml backtested over two folds, each refit for one epoch from the fold before.
  static Config TwoFoldRefit() {
    var cfg = Tiny();
    cfg.Set("backtest.folds", "2");
    cfg.Set("backtest.mode", "refit");
    cfg.Set("backtest.refit_epochs", "1");
    return cfg;
  }

  // A refit backtest of tiny.yaml over two folds: both finish, and the pooled forecasts are
  // both folds'.
  public static void TestBacktest() {
    using (var cfg = TwoFoldRefit()) {
      var report = BacktestReport.Run(cfg);
      Check.Equal(2L, report.FinishedFolds, "finished folds");
      Check.Equal(2, report.PerFold.Count, "per-fold figures");
      Check.Equal(report.PerFold[0].Model.Windows + report.PerFold[1].Model.Windows,
                  report.Overall.Model.Windows, "pooled windows");
      Check.True(report.Overall.Model.QRiskP50 > 0 && report.Overall.Naive.QRiskP50 > 0,
                 "q-risk");
      Check.True(File.Exists(Path.Combine(cfg.Get("output.directory"), "backtest.csv")),
                 "backtest.csv written");
      cfg.Set("backtest.folds", "500");
      Check.Throws(Status.Config, "backtest.folds 500", () => BacktestReport.Run(cfg));
    }
  }

  // Progress reaches a backtest's callback with the fold it trains; cancelling in fold 2 keeps
  // fold 1 on disk, and an exception in the callback cancels and comes back out of Run.
  public static void TestBacktestProgress() {
    using (var cfg = TwoFoldRefit()) {
      var calls = new long[3];
      var report = BacktestReport.Run(cfg, p => {
        Check.True(p.Folds == 2 && p.Fold >= 1 && p.Fold <= 2, "fold " + p.Fold + " of " + p.Folds);
        calls[p.Fold]++;
        return false;
      });
      Check.Equal(2L, report.FinishedFolds, "finished folds");
      Check.True(calls[1] > 0 && calls[2] > 0, "progress in both folds");

      string cancelled = TempDir();
      cfg.Set("output.directory", cancelled);
      Check.Throws(Status.Cancelled, "", () => BacktestReport.Run(cfg, p => p.Fold == 2));
      Check.True(File.Exists(Path.Combine(cancelled, "folds", "fold-1", "summary.json")),
                 "fold 1 kept after a cancel in fold 2");
      Check.True(File.Exists(Path.Combine(cancelled, "backtest.json")), "backtest.json kept");
      Check.True(!File.Exists(Path.Combine(cancelled, "folds", "fold-2", "summary.json")),
                 "no summary of the cancelled fold 2");
      Check.Throws<InvalidOperationException>(() => BacktestReport.Run(
          cfg, p => { throw new InvalidOperationException("in the callback"); }));
    }
  }
}
