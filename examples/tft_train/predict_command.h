// tft-train predict: forecasts new data with a saved model.
//
//   tft-train predict --model DIR [--data FILE] [--output DIR]
//
// Reads FILE (CSV or Parquet by its extension; default: the training data named in the
// model's config.yaml) laid out like the training data, with the model's stored transforms:
// nothing is refitted. Each series needs at least encoder_length + prediction_length rows, as
// in training. Writes DIR/forecast.csv (default DIR: ./predictions) with the forecast of the
// prediction_length steps after the last row of every series (kind "future"; docs/outputs.md),
// and prints where. A category the model has not seen goes to the unknown bucket, with a
// warning on stderr naming the column and how many values. A series the model has not seen
// needs data.scaling global or none (per_series scaling has no statistics for it).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace tft_train {

struct PredictOptions {
  std::string model;
  std::string data;
  std::string output = "predictions";
};

// Adds the `predict` subcommand to `app`; its options land in `options`.
CLI::App* add_predict_command(CLI::App& app, PredictOptions& options);

// Runs it; throws tft::Error (and LibTorch's c10::Error) on failure.
void run_predict(const PredictOptions& options);

}  // namespace tft_train
