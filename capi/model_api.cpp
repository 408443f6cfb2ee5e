// tft_model_*: a saved model folder, loaded to forecast new data.
#include "data_handle.h"
#include "predictions_handle.h"

#include <optional>

#include "store/saved_model.h"

struct tft_model {
  static constexpr std::uint64_t kMagic = 0x7466746d6f646cULL;  // "tftmodl"
  static constexpr const char* kTypeName = "tft_model";
  std::optional<tft::SavedModel> saved;
};

using tft::capi::live;
using tft::capi::require;

extern "C" {

tft_status tft_model_create_from_directory(const char* directory, tft_model** out) {
  TFT_API_BEGIN
  require(directory, __func__, "directory");
  require(out, __func__, "out");
  auto handle = std::make_unique<tft_model>();
  handle->saved.emplace(tft::SavedModel::load(directory));
  *out = tft::capi::publish(std::move(handle));
  TFT_API_END
}

void tft_model_free(tft_model* model) { tft::capi::destroy(model); }

tft_status tft_model_predict(tft_model* model, const char* csv_path, tft_predictions** out) {
  TFT_API_BEGIN
  tft::SavedModel& saved = *live(model, __func__, "model")->saved;
  require(out, __func__, "out");
  const tft::TimeSeriesDataset dataset = saved.load_dataset(csv_path != nullptr ? csv_path : "");
  *out = tft::capi::make_predictions(dataset, saved.predict(dataset),
                                     saved.config().data.group_columns);
  TFT_API_END
}

tft_status tft_model_predict_data(tft_model* model, const tft_data* data, tft_predictions** out) {
  TFT_API_BEGIN
  tft::SavedModel& saved = *live(model, __func__, "model")->saved;
  live(data, __func__, "data");
  require(out, __func__, "out");
  const tft::TimeSeriesDataset dataset =
      tft::capi::load_data(data, __func__, saved.config(), &saved.transforms());
  *out = tft::capi::make_predictions(dataset, saved.predict(dataset),
                                     saved.config().data.group_columns);
  TFT_API_END
}

}  // extern "C"
