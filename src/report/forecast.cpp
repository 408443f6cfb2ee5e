#include "report/forecast.h"

#include <algorithm>

#include <torch/utils.h>

#include "data/future_window.h"
#include "report/forecast_units.h"

namespace tft {

namespace {

// Puts the model in eval mode for the scope, then back to what it was.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(TFTModel& model) : model_(model), was_training_(model->is_training()) {
    model_->eval();
  }
  ~EvalModeGuard() { model_->train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  TFTModel& model_;
  bool was_training_;
};

void append_forecasts(const TimeSeriesDataset& dataset, const TrainingBatch& batch,
                      const TFTOutput& output, const std::vector<double>& quantiles,
                      const QuantileCalibration& calibration, bool future,
                      std::vector<Forecast>& out) {
  const at::Tensor prediction =
      forecast_in_original_units(dataset, batch,
                                 calibration.apply(output.prediction.detach().cpu()), quantiles)
          .contiguous();
  const at::Tensor actual = unscale_target(dataset, batch, batch.targets.cpu()).contiguous();
  const std::int64_t b = prediction.size(0), steps = prediction.size(1);
  const std::int64_t q = prediction.size(2);
  const float* p = prediction.data_ptr<float>();
  const float* y = actual.data_ptr<float>();
  const std::int64_t* series = batch.series.data_ptr<std::int64_t>();
  const at::Tensor times_tensor = batch.decoder_times.contiguous();
  const std::int64_t* times = times_tensor.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < b; ++i) {
    Forecast f;
    f.series = static_cast<std::uint32_t>(series[i]);
    f.future = future;
    f.times.assign(times + i * steps, times + (i + 1) * steps);
    f.values.assign(p + i * steps * q, p + (i + 1) * steps * q);
    f.actuals.assign(y + i * steps, y + (i + 1) * steps);
    out.push_back(std::move(f));
  }
}

}  // namespace

std::string series_label(const TimeSeriesDataset& dataset, std::size_t series) {
  const SeriesInfo& info = dataset.series().at(series);
  return info.group_values.empty() ? dataset.schema().target : info.label;
}

void for_each_batch_output(TFTModel& model, const TimeSeriesDataset& dataset,
                           const std::vector<Window>& windows, std::int64_t batch_size,
                           const c10::Device& device,
                           const std::function<void(const TrainingBatch&, const TFTOutput&)>& fn) {
  EvalModeGuard eval(model);
  torch::NoGradGuard no_grad;
  const auto size = static_cast<std::size_t>(std::max<std::int64_t>(1, batch_size));
  for (const std::vector<Window>& part : cut_into_batches(windows, size)) {
    const TrainingBatch batch = gather_batch(dataset, part).to(device);
    fn(batch, model->forward(batch.inputs));
  }
}

MetricAccumulator accumulate_windows(TFTModel& model, const TimeSeriesDataset& dataset,
                                     const std::vector<Window>& windows, std::int64_t batch_size,
                                     const c10::Device& device) {
  const std::vector<double>& quantiles = model->config().quantiles;
  MetricAccumulator metrics(quantiles);
  for_each_batch_output(model, dataset, windows, batch_size, device,
                        [&](const TrainingBatch& batch, const TFTOutput& output) {
                          const at::Tensor prediction = output.prediction.detach().cpu();
                          const at::Tensor target = batch.targets.cpu();
                          metrics.add(
                              prediction, target,
                              forecast_in_original_units(dataset, batch, prediction, quantiles),
                              unscale_target(dataset, batch, target));
                        });
  return metrics;
}

ValidationMetrics evaluate_windows(TFTModel& model, const TimeSeriesDataset& dataset,
                                   const std::vector<Window>& windows, std::int64_t batch_size,
                                   const c10::Device& device) {
  return accumulate_windows(model, dataset, windows, batch_size, device).result();
}

Predictions predict_forecasts(TFTModel& model, const TimeSeriesDataset& dataset,
                              std::int64_t batch_size, const c10::Device& device,
                              const QuantileCalibration& calibration) {
  Predictions out;
  out.quantiles = model->config().quantiles;
  out.prediction_length = dataset.prediction_length();
  InterpretationAccumulator interpretation(model->config());
  const std::vector<Window>& windows = dataset.validation_windows();
  for_each_batch_output(model, dataset, windows, batch_size, device,
                        [&](const TrainingBatch& batch, const TFTOutput& output) {
                          append_forecasts(dataset, batch, output, out.quantiles, calibration,
                                           false, out.forecasts);
                          interpretation.add(output);
                        });
  // Origins: the time of each window's last encoder step.
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const SeriesInfo& info = dataset.series()[windows[i].series];
    out.forecasts[i].origin = dataset.times()[static_cast<std::size_t>(
        info.offset + windows[i].start + dataset.encoder_length() - 1)];
  }
  out.interpretation = interpretation.result();

  // The windows after the data, in batches like the others.
  EvalModeGuard eval(model);
  torch::NoGradGuard no_grad;
  const auto n = static_cast<std::uint32_t>(dataset.series().size());
  const auto size = static_cast<std::uint32_t>(std::max<std::int64_t>(1, batch_size));
  for (std::uint32_t begin = 0; begin < n; begin += size) {
    std::vector<std::uint32_t> series;
    for (std::uint32_t s = begin; s < std::min(n, begin + size); ++s) series.push_back(s);
    const TrainingBatch batch = gather_future_batch(dataset, series).to(device);
    const std::size_t first = out.forecasts.size();
    append_forecasts(dataset, batch, model->forward(batch.inputs), out.quantiles, calibration, true,
                     out.forecasts);
    for (std::size_t i = first; i < out.forecasts.size(); ++i) {
      const SeriesInfo& info = dataset.series()[out.forecasts[i].series];
      out.forecasts[i].origin =
          dataset.times()[static_cast<std::size_t>(info.offset + info.length - 1)];
    }
  }
  return out;
}

}  // namespace tft
