// tft_trainer_*: the Trainer behind a handle, its progress callback and its results.
#include "data_handle.h"
#include "handles.h"
#include "predictions_handle.h"
#include "report_handle.h"

#include <cmath>
#include <limits>
#include <memory>

#include "store/saved_model.h"
#include "train/trainer.h"

struct tft_trainer {
  static constexpr std::uint64_t kMagic = 0x74667474726e72ULL;  // "tfttrnr"
  static constexpr const char* kTypeName = "tft_trainer";
  std::unique_ptr<tft::Trainer> trainer;
  tft_progress_fn progress = nullptr;
  void* progress_user = nullptr;
};

using tft::capi::live;
using tft::capi::require;
using tft::capi::to_c;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

tft_progress progress_to_c(const tft::TrainProgress& p) {
  tft_progress out{};
  out.struct_size = sizeof out;
  out.kind = p.kind == tft::TrainProgress::Kind::Epoch ? TFT_PROGRESS_EPOCH : TFT_PROGRESS_STEP;
  out.epoch = p.epoch;
  out.epochs = p.epochs;
  out.step = p.step;
  out.steps_per_epoch = p.steps;
  out.train_loss = p.loss;
  out.validation_loss = p.metrics != nullptr ? p.metrics->validation.loss : kNaN;
  out.samples_per_second = p.samples_per_second;
  out.peak_activation_bytes = p.peak_activation_bytes;
  out.learning_rate = p.learning_rate;
  return out;
}

}  // namespace

namespace tft::capi {

tft_progress to_c(const TrainProgress& p, std::int64_t fold, std::int64_t folds) {
  tft_progress out = progress_to_c(p);
  out.fold = fold;
  out.folds = folds;
  return out;
}

}  // namespace tft::capi

namespace {

tft_status train(tft_trainer* handle, tft_train_report** report, bool resume,
                 const char* function) {
  TFT_API_BEGIN
  live(handle, function, "trainer");
  tft::ProgressCallback progress;
  if (handle->progress != nullptr) {
    progress = [fn = handle->progress, user = handle->progress_user](const tft::TrainProgress& p) {
      const tft_progress c = progress_to_c(p);
      return fn(&c, user) == 0;
    };
  }
  const tft::TrainReport result = handle->trainer->train(progress, resume);
  if (report != nullptr) *report = tft::capi::make_train_report(result);
  TFT_API_END_AS(function)
}

}  // namespace

extern "C" {

tft_status tft_trainer_create(const tft_config* config, tft_trainer** out) {
  TFT_API_BEGIN
  const auto* source = live(config, __func__, "config");
  require(out, __func__, "out");
  if (source->config.data.path.empty()) {
    throw tft::ConfigError(std::string(__func__) +
                           ": data.path is empty: name the data file in the config, or pass "
                           "the data in memory with tft_trainer_create_from_data");
  }
  auto handle = std::make_unique<tft_trainer>();
  handle->trainer = std::make_unique<tft::Trainer>(source->config);
  *out = tft::capi::publish(std::move(handle));
  TFT_API_END
}

tft_status tft_trainer_create_from_data(const tft_config* config, const tft_data* data,
                                        tft_trainer** out) {
  TFT_API_BEGIN
  const auto* source = live(config, __func__, "config");
  const tft_data* rows = live(data, __func__, "data");
  require(out, __func__, "out");
  auto handle = std::make_unique<tft_trainer>();
  // The trainer reads the rows itself: a refit (training.init_from) reads them with the saved
  // model's transforms.
  const std::unique_ptr<tft::RowSource> row_source = rows->data->rows();
  handle->trainer = std::make_unique<tft::Trainer>(source->config, *row_source);
  *out = tft::capi::publish(std::move(handle));
  TFT_API_END
}

void tft_trainer_free(tft_trainer* trainer) { tft::capi::destroy(trainer); }

tft_status tft_trainer_set_progress_callback(tft_trainer* trainer, tft_progress_fn fn, void* user) {
  TFT_API_BEGIN
  auto* handle = live(trainer, __func__, "trainer");
  handle->progress = fn;
  handle->progress_user = fn != nullptr ? user : nullptr;
  TFT_API_END
}

tft_status tft_trainer_train(tft_trainer* trainer, tft_train_report** report) {
  return train(trainer, report, /*resume=*/false, __func__);
}

tft_status tft_trainer_resume(tft_trainer* trainer, tft_train_report** report) {
  return train(trainer, report, /*resume=*/true, __func__);
}

tft_status tft_trainer_cancel(tft_trainer* trainer) {
  TFT_API_BEGIN
  tft::capi::require(trainer, __func__, "trainer");
  // Under the registry's lock: a tft_trainer_free racing this call frees the trainer either
  // before (then this reports a dead handle) or after the flag is set, never during.
  const auto cancel = [](const void* handle) {
    static_cast<const tft_trainer*>(handle)->trainer->cancel();
  };
  if (!tft::capi::with_live_handle(trainer, tft_trainer::kMagic, cancel)) {
    tft::capi::throw_dead_handle(__func__, "trainer", tft_trainer::kTypeName);
  }
  TFT_API_END
}

tft_status tft_trainer_evaluate(tft_trainer* trainer, tft_metrics* out) {
  TFT_API_BEGIN
  auto* handle = live(trainer, __func__, "trainer");
  tft::capi::require_struct(out, __func__, "out");
  tft::capi::fill_struct(out, to_c(handle->trainer->evaluate()));
  TFT_API_END
}

tft_status tft_trainer_predict(tft_trainer* trainer, tft_predictions** out) {
  TFT_API_BEGIN
  auto* handle = live(trainer, __func__, "trainer");
  require(out, __func__, "out");
  tft::Trainer& t = *handle->trainer;
  *out = tft::capi::make_predictions(t.dataset(), t.predict(), t.config().data.group_columns);
  TFT_API_END
}

tft_status tft_trainer_predict_csv(tft_trainer* trainer, const char* path) {
  TFT_API_BEGIN
  auto* handle = live(trainer, __func__, "trainer");
  require(path, __func__, "path");
  tft::Trainer& t = *handle->trainer;
  tft_predictions* predictions =
      tft::capi::make_predictions(t.dataset(), t.predict(), t.config().data.group_columns);
  const tft_status status = tft_predictions_write_csv(predictions, path);
  tft_predictions_free(predictions);
  return status;
  TFT_API_END
}

tft_status tft_trainer_predict_data(tft_trainer* trainer, const tft_data* data,
                                    tft_predictions** out) {
  TFT_API_BEGIN
  auto* handle = live(trainer, __func__, "trainer");
  live(data, __func__, "data");
  require(out, __func__, "out");
  tft::Trainer& t = *handle->trainer;
  const tft::TimeSeriesDataset dataset =
      tft::capi::load_data(data, __func__, t.config(), &t.dataset().transforms());
  *out = tft::capi::make_predictions(dataset, t.predict(dataset), t.config().data.group_columns);
  TFT_API_END
}

tft_status tft_trainer_save(tft_trainer* trainer, const char* directory) {
  TFT_API_BEGIN
  auto* handle = live(trainer, __func__, "trainer");
  tft::Trainer& t = *handle->trainer;
  t.save_model(directory == nullptr ? std::filesystem::path() : std::filesystem::path(directory));
  TFT_API_END
}

tft_status tft_trainer_measure_memory(tft_trainer* trainer, tft_memory_report* out) {
  TFT_API_BEGIN
  auto* handle = live(trainer, __func__, "trainer");
  tft::capi::require_struct(out, __func__, "out");
  tft::capi::fill_struct(out, to_c(handle->trainer->memory_report()));
  TFT_API_END
}

}  // extern "C"
