package tftrain

// Backtest: a rolling-origin backtest of a config (tft_backtest_run, docs/backtest.md).

import (
	"runtime"
	"runtime/cgo"

	"tftrain/internal/swig"
)

// Forecasts is one fold's figures, or every fold's pooled: the model's and both baselines'.
type Forecasts struct {
	Model         Metrics
	Naive         Metrics
	SeasonalNaive Metrics // Windows 0: not scored
}

// BacktestReport is how a backtest went.
type BacktestReport struct {
	Folds             int64 // backtest.folds
	FinishedFolds     int64
	FoldsBeatingNaive int64   // finished folds whose P50 q-risk is below the naive forecast's
	IntervalCoverage  float64 // the model's, lowest to highest quantile, over every fold
	Seconds           float64
	Overall           Forecasts   // every fold pooled
	PerFold           []Forecasts // fold 1 first
}

// Backtest runs the backtest cfg describes (backtest.folds, backtest.mode,
// backtest.refit_epochs) on data.path, writing each fold's run and backtest.csv, backtest.json
// and backtest.svg under output.directory. It reports no progress.
func Backtest(cfg *Config) (*BacktestReport, error) { return BacktestWithProgress(cfg, nil) }

// BacktestWithProgress is Backtest with a progress callback (nil: none), called on this
// goroutine after every step and epoch of every fold's training, with Fold and Folds set.
// Returning true cancels: the folds finished stay on disk, and the error is ErrCancelled.
func BacktestWithProgress(cfg *Config, progress ProgressFunc) (*BacktestReport, error) {
	if cfg == nil || cfg.raw == nil {
		return nil, closedError("Config")
	}
	defer runtime.KeepAlive(cfg)
	var panicked any
	var handle cgo.Handle
	if progress != nil {
		handle = progressHandle(progress, func(p any) { panicked = p })
		defer handle.Delete()
	}
	var raw swig.BacktestReport
	if err := call(func() {
		if handle == 0 {
			raw = swig.NewBacktestReport(cfg.raw)
		} else {
			raw = swig.BacktestReportRunWithProgressHandle(cfg.raw, uint64(handle))
		}
	}); err != nil {
		return nil, withPanic(err, panicked)
	}
	defer swig.DeleteBacktestReport(raw)
	s := swig.NewBacktestSummary()
	defer swig.DeleteBacktestSummary(s)
	if err := call(func() { raw.GetSummary(s) }); err != nil {
		return nil, err
	}
	report := &BacktestReport{Folds: s.GetFolds(), FinishedFolds: s.GetFinished_folds(),
		FoldsBeatingNaive: s.GetFolds_beating_naive(), IntervalCoverage: s.GetInterval_coverage(),
		Seconds: s.GetSeconds()}
	metrics := func(fold int64) (Forecasts, error) {
		var out [3]Metrics
		for which := range out {
			m := swig.NewMetrics()
			err := call(func() { raw.GetMetrics(fold, which, m) })
			out[which] = metricsFrom(m)
			swig.DeleteMetrics(m)
			if err != nil {
				return Forecasts{}, err
			}
		}
		return Forecasts{Model: out[0], Naive: out[1], SeasonalNaive: out[2]}, nil
	}
	var err error
	if report.Overall, err = metrics(0); err != nil {
		return nil, err
	}
	for fold := int64(1); fold <= report.FinishedFolds; fold++ {
		f, err := metrics(fold)
		if err != nil {
			return nil, err
		}
		report.PerFold = append(report.PerFold, f)
	}
	return report, nil
}
