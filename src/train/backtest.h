// A rolling-origin backtest (tft-train backtest; docs/backtest.md): how the config's model would
// have forecast the last rows of every series, had it been trained just before them.
//
// Fold k of K (backtest.folds, 1-based) cuts each series of n rows at row
// n - (K - k + 1) x prediction_length, its origin: the fold trains on the rows before the origin
// (split and windowed as the config says, as if the file ended there; TimeSeriesDataset::cut_at)
// and forecasts the prediction_length rows after it, whose actuals are known, with the true
// known covariates. The folds' forecast rows tile the last K x prediction_length rows.
//   backtest.mode scratch  every fold trains from fresh weights (training.seed), its scalers
//                          fitted on its own rows, its target center chosen as a run's is
//   backtest.mode refit    fold 1 as scratch; fold k > 1 refits fold k - 1's model (refit.h)
//                          for backtest.refit_epochs epochs, keeping its transforms
// The encoders are fitted once, on the whole file's training part (as tft-train's), so a
// category first seen after a fold's origin has its own code there rather than the unknown one.
//
// Files in output.directory:
//   folds/fold-<k>/  each fold's run (model/, summary.json, forecast.csv, ...)
//   backtest.csv     one row per forecast step of every finished fold (docs/outputs.md)
//   backtest.json    per fold and overall figures (backtest_report.h)
//   backtest.svg     q-risk per fold against both baselines, and the interval coverage
// The three are rewritten after every fold, so a cancelled backtest (the progress callback's
// false, Ctrl-C in tft-train) leaves its finished folds on disk.
#pragma once

#include <cstdint>
#include <functional>

#include "config/train_config.h"
#include "report/backtest_report.h"
#include "report/train_report.h"

namespace tft {

// Called with the fold (1-based) and the number of folds after every step and epoch of the
// fold's training; false cancels (CancelledError, after the finished folds' files are written).
using BacktestProgress =
    std::function<bool(std::int64_t fold, std::int64_t folds, const TrainProgress& progress)>;

// Runs the backtest `config` describes (above). ConfigError before anything is written when
// training.init_from is set (mode refit refits fold by fold) or when no series keeps a training
// and a validation-free forecast window before fold 1's origin; IoError / DataError as the
// trainer's.
BacktestReport run_backtest(const TrainConfig& config, const BacktestProgress& progress = nullptr);

}  // namespace tft
