// Gathering windows into the tensors the model takes (TFTBatch, model/tft_batch.h), plus the
// targets and what is needed to write forecasts back: the series of each sample and the time
// values of its decoder steps. With future_window.h, the LibTorch part of src/data.
#pragma once

#include <vector>

#include <torch/types.h>

#include "data/time_series_dataset.h"
#include "model/tft_batch.h"

namespace tft {

struct TrainingBatch {
  // Shapes and column order as TFTBatch documents; a group without variables has a last
  // dimension of 0 (never an undefined tensor). Reals float32 (scaled), codes int64.
  TFTBatch inputs;
  torch::Tensor targets;        // [B, T_dec] float32, scaled like the target
  torch::Tensor series;         // [B] int64: index into TimeSeriesDataset::series()
  torch::Tensor decoder_times;  // [B, T_dec] int64: time values (TimeSeriesDataset::format_time)
  // [B] float64: each sample's target normalisation (TimeSeriesDataset::target_normalization)
  torch::Tensor target_center;
  torch::Tensor target_scale;
  // [B, T_dec] float64: the center of each decoder step's target
  // (TimeSeriesDataset::decoder_center): target_center repeated, or under center seasonal the
  // value one season earlier. Targets and forecasts are normalised with it and target_scale.
  torch::Tensor decoder_center;

  // A copy with every tensor on `device` (series, decoder_times and the target normalisation
  // stay on the CPU: they are for writing results, not for the model). To a GPU the tensors go
  // through pinned memory and the copies are queued, not waited for: a copy from ordinary
  // (pageable) memory would first wait for all the GPU's queued work, once per batch.
  TrainingBatch to(const torch::Device& device) const;
};

// The model's inputs on `device`, copied as TrainingBatch::to copies them.
TFTBatch to_device(const TFTBatch& batch, const torch::Device& device);

// A batch of `size` samples shaped for `dataset` (uninitialised CPU tensors), to fill in.
TrainingBatch empty_batch(const TimeSeriesDataset& dataset, std::int64_t size);

// Where sample `i` of `batch` (laid out by empty_batch for `dataset`) lives: the slices
// fill_sample writes.
SampleBuffers sample_buffers(TrainingBatch& batch, const TimeSeriesDataset& dataset,
                             std::int64_t i);

// Gathers `windows` (any count, 0 included) from `dataset` into CPU tensors.
TrainingBatch gather_batch(const TimeSeriesDataset& dataset, const std::vector<Window>& windows);

// Values normalised like the target of `batch` (a prediction [B, T_dec, n_quantiles], the
// targets [B, T_dec], ...) back in original units: T^-1(value * scale + center) with each
// sample's scale (batch.target_scale), each decoder step's center (batch.decoder_center) and
// the dataset's transformation. Computed in double; the result has the dtype and device of
// `values`.
torch::Tensor unscale_target(const TimeSeriesDataset& dataset, const TrainingBatch& batch,
                             const torch::Tensor& values);

}  // namespace tft
