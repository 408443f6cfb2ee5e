#include "data/batch.h"

#include <ATen/Parallel.h>

#include "common/error.h"

namespace tft {

namespace {

torch::Tensor to_device(const torch::Tensor& t, const torch::Device& device) {
  if (!t.defined() || t.device() == device) return t;
  if (device.is_cuda() && t.is_cpu()) return t.pin_memory().to(device, /*non_blocking=*/true);
  return t.to(device);
}

}  // namespace

TFTBatch to_device(const TFTBatch& batch, const torch::Device& device) {
  return {to_device(batch.static_reals, device),  to_device(batch.static_categoricals, device),
          to_device(batch.encoder_reals, device), to_device(batch.encoder_categoricals, device),
          to_device(batch.decoder_reals, device), to_device(batch.decoder_categoricals, device)};
}

TrainingBatch TrainingBatch::to(const torch::Device& device) const {
  TrainingBatch out;
  out.inputs = to_device(inputs, device);
  out.targets = to_device(targets, device);
  out.series = series;
  out.decoder_times = decoder_times;
  out.target_center = target_center;
  out.target_scale = target_scale;
  out.decoder_center = decoder_center;
  return out;
}

TrainingBatch empty_batch(const TimeSeriesDataset& dataset, std::int64_t size) {
  const std::int64_t b = size;
  const std::int64_t enc = dataset.encoder_length();
  const std::int64_t dec = dataset.prediction_length();
  const BatchWidths w = dataset.widths();
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);

  TrainingBatch batch;
  TFTBatch& in = batch.inputs;
  in.static_reals = torch::empty({b, w.static_reals}, f32);
  in.static_categoricals = torch::empty({b, w.static_categoricals}, i64);
  in.encoder_reals = torch::empty({b, enc, w.encoder_reals}, f32);
  in.encoder_categoricals = torch::empty({b, enc, w.encoder_categoricals}, i64);
  in.decoder_reals = torch::empty({b, dec, w.decoder_reals}, f32);
  in.decoder_categoricals = torch::empty({b, dec, w.decoder_categoricals}, i64);
  batch.targets = torch::empty({b, dec}, f32);
  batch.series = torch::empty({b}, i64);
  batch.decoder_times = torch::empty({b, dec}, i64);
  batch.target_center = torch::empty({b}, torch::TensorOptions().dtype(torch::kFloat64));
  batch.target_scale = torch::empty({b}, torch::TensorOptions().dtype(torch::kFloat64));
  batch.decoder_center = torch::empty({b, dec}, torch::TensorOptions().dtype(torch::kFloat64));
  return batch;
}

SampleBuffers sample_buffers(TrainingBatch& batch, const TimeSeriesDataset& dataset,
                             std::int64_t i) {
  const std::int64_t enc = dataset.encoder_length();
  const std::int64_t dec = dataset.prediction_length();
  const BatchWidths w = dataset.widths();
  TFTBatch& in = batch.inputs;
  SampleBuffers out;
  out.static_reals = in.static_reals.data_ptr<float>() + i * w.static_reals;
  out.static_categoricals =
      in.static_categoricals.data_ptr<std::int64_t>() + i * w.static_categoricals;
  out.encoder_reals = in.encoder_reals.data_ptr<float>() + i * enc * w.encoder_reals;
  out.encoder_categoricals =
      in.encoder_categoricals.data_ptr<std::int64_t>() + i * enc * w.encoder_categoricals;
  out.decoder_reals = in.decoder_reals.data_ptr<float>() + i * dec * w.decoder_reals;
  out.decoder_categoricals =
      in.decoder_categoricals.data_ptr<std::int64_t>() + i * dec * w.decoder_categoricals;
  out.targets = batch.targets.data_ptr<float>() + i * dec;
  out.decoder_times = batch.decoder_times.data_ptr<std::int64_t>() + i * dec;
  out.target_center = batch.target_center.data_ptr<double>() + i;
  out.target_scale = batch.target_scale.data_ptr<double>() + i;
  out.decoder_center = batch.decoder_center.data_ptr<double>() + i * dec;
  return out;
}

TrainingBatch gather_batch(const TimeSeriesDataset& dataset, const std::vector<Window>& windows) {
  const auto b = static_cast<std::int64_t>(windows.size());
  TrainingBatch batch = empty_batch(dataset, b);
  if (b == 0) return batch;

  const auto n_series = dataset.series().size();
  for (std::int64_t i = 0; i < b; ++i) {
    if (windows[static_cast<std::size_t>(i)].series >= n_series) {
      throw DataError("gather_batch: window " + std::to_string(i) + " names series " +
                      std::to_string(windows[static_cast<std::size_t>(i)].series) +
                      ", but the dataset has " + std::to_string(n_series));
    }
  }

  // Samples are independent: fill them in parallel (each writes its own slices).
  std::int64_t* series = batch.series.data_ptr<std::int64_t>();
  at::parallel_for(0, b, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const Window& window = windows[static_cast<std::size_t>(i)];
      dataset.fill_sample(window, sample_buffers(batch, dataset, i));
      series[i] = window.series;
    }
  });
  return batch;
}

torch::Tensor unscale_target(const TimeSeriesDataset& dataset, const TrainingBatch& batch,
                             const torch::Tensor& values) {
  const torch::Tensor& center = batch.decoder_center;
  const torch::Tensor& scale = batch.target_scale;
  if (!center.defined() || !scale.defined() || center.dim() != 2 || scale.dim() != 1 ||
      center.scalar_type() != torch::kFloat64 || center.size(0) != scale.size(0) ||
      scale.scalar_type() != torch::kFloat64) {
    throw DataError(
        "unscale_target: the batch's target_scale must be a [B] and its decoder_center a "
        "[B, T_dec] float64 tensor");
  }
  const std::int64_t b = center.size(0);
  const std::int64_t steps = center.size(1);
  if (values.dim() < 2 || values.size(0) != b || values.size(1) != steps) {
    throw DataError("unscale_target: values must be [" + std::to_string(b) + ", " +
                    std::to_string(steps) + ", ...] (batch size, decoder steps)");
  }
  std::vector<std::int64_t> scale_shape(static_cast<std::size_t>(values.dim()), 1);
  scale_shape[0] = b;
  std::vector<std::int64_t> center_shape = scale_shape;
  center_shape[1] = steps;
  // In double, so large levels (prices, volumes) keep their precision before the cast back.
  const auto device = values.device();
  const torch::Tensor level = values.to(torch::kFloat64) * scale.view(scale_shape).to(device) +
                              center.view(center_shape).to(device);
  torch::Tensor original;
  switch (dataset.transforms().target_normalizer.transformation) {
    case TargetTransformation::None: original = level; break;
    case TargetTransformation::Log: original = level.exp(); break;
    case TargetTransformation::Log1p: original = level.expm1(); break;
    case TargetTransformation::Softplus: original = torch::softplus(level); break;
  }
  return original.to(values.scalar_type());
}

}  // namespace tft
