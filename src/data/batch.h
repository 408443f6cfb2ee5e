// Gathering windows into the tensors the model takes (TFTBatch, model/tft_model.h), plus the
// targets and what is needed to write forecasts back: the series of each sample and the time
// values of its decoder steps. The one LibTorch file of src/data.
#pragma once

#include <vector>

#include <torch/types.h>

#include "data/time_series_dataset.h"
#include "model/tft_model.h"

namespace tft {

struct TrainingBatch {
  // Shapes and column order as TFTBatch documents; a group without variables has a last
  // dimension of 0 (never an undefined tensor). Reals float32 (scaled), codes int64.
  TFTBatch inputs;
  torch::Tensor targets;        // [B, T_dec] float32, scaled like the target
  torch::Tensor series;         // [B] int64: index into TimeSeriesDataset::series()
  torch::Tensor decoder_times;  // [B, T_dec] int64: time values (TimeSeriesDataset::format_time)

  // A copy with every tensor on `device` (series and decoder_times stay on the CPU: they are
  // for writing results, not for the model).
  TrainingBatch to(const torch::Device& device, bool non_blocking = false) const;
};

// A batch of `size` samples shaped for `dataset` (uninitialised CPU tensors), to fill in.
TrainingBatch empty_batch(const TimeSeriesDataset& dataset, std::int64_t size);

// Gathers `windows` (any count, 0 included) from `dataset` into CPU tensors.
TrainingBatch gather_batch(const TimeSeriesDataset& dataset, const std::vector<Window>& windows);

// Values scaled like the target (a prediction [B, T_dec, n_quantiles], targets [B, T_dec], ...)
// back in original units: value * scale + mean of each sample's series. `series` is
// TrainingBatch::series ([B] int64); the result has the dtype and device of `values`.
torch::Tensor unscale_target(const TimeSeriesDataset& dataset, const torch::Tensor& series,
                             const torch::Tensor& values);

}  // namespace tft
