#include "data/dataset_builder.h"

#include "data/series_storage.h"

namespace tft {

DatasetBuilder::DatasetBuilder(RowSource& source, const TrainConfig& config,
                               const DataTransforms* fitted, const FittedTransformsUse& use)
    : source_(source),
      config_(config),
      data_(config.data),
      fitted_(fitted),
      use_(use),
      target_normalizer_(fitted != nullptr ? fitted->target_normalizer
                                           : config.data.target_normalizer) {}

TimeSeriesDataset DatasetBuilder::build() {
  ds_.encoder_length_ = config_.windows.encoder_length;
  ds_.prediction_length_ = config_.windows.prediction_length;
  plan_ = plan_columns(source_, data_);
  LoadedRows rows = read_rows(source_, plan_, data_, target_normalizer_);
  store_by_series(rows);
  take_rows(std::move(rows));
  split();
  encode_categoricals();
  encode_static_categoricals();
  resolve_target_center();  // before fit_scalers, which saves the resolved normaliser
  fit_scalers();
  resolve_median_rounding();
  make_schema();
  make_sample_plans();
  make_windows();
  return std::move(ds_);
}

void DatasetBuilder::take_rows(LoadedRows rows) {
  ds_.series_ = std::move(rows.series);
  ds_.times_ = std::move(rows.times);
  ds_.reals_ = std::move(rows.reals);
  ds_.categoricals_ = std::move(rows.categoricals);
  ds_.static_reals_ = std::move(rows.static_reals);
  ds_.time_kind_ = rows.time_kind;
  ds_.times_have_zone_ = rows.times_have_zone;
  ds_.dropped_rows_ = rows.dropped_rows;
  ds_.filled_values_ = rows.filled_values;
  category_values_ = std::move(rows.category_values);
  static_ids_ = std::move(rows.static_ids);
}

}  // namespace tft
