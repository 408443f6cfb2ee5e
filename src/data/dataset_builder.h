// Loading a TimeSeriesDataset from a RowSource, step by step (time_series_dataset.h,
// "Loading"): plan the columns, read the rows and store them by series (reading:
// column_plan.h, row_reader.h, series_storage.h), split each series, fit or take the
// transforms (fitting: dataset_fitting.cpp), then lay out samples and list the windows
// (windowing: dataset_windows.cpp). Internal to src/data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/train_config.h"
#include "data/row_range.h"
#include "data/row_reader.h"
#include "data/time_series_dataset.h"
#include "readers/column_plan.h"
#include "readers/load_errors.h"
#include "readers/row_source.h"

namespace tft {

class DatasetBuilder {
 public:
  // `fitted` may be null (fit here); `use` says what to fit beside it. The others must outlive
  // the builder.
  DatasetBuilder(RowSource& source, const TrainConfig& config, const DataTransforms* fitted,
                 const FittedTransformsUse& use = {});

  TimeSeriesDataset build();

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    fail_at(source_, line, what);
  }

  // Reading (dataset_builder.cpp).
  void take_rows(LoadedRows rows);

  // Fitting (dataset_fitting.cpp).
  std::vector<RowRange> training_parts() const;
  const CategoricalEncoder& fitted_encoder(const std::string& column) const;
  void encode_categoricals();
  void encode_static_categoricals();
  void fit_scalers();
  void resolve_target_center();
  void resolve_median_rounding();
  void locate_statistics(const std::vector<std::string>& static_names);

  // Windowing (dataset_windows.cpp).
  void split();
  void make_schema();
  void make_sample_plans();
  void make_windows();

  RowSource& source_;
  const TrainConfig& config_;
  const DataConfig& data_;
  const DataTransforms* fitted_;
  FittedTransformsUse use_;
  // The saved model's normaliser when loading with fitted transforms, else the config's.
  TargetNormalizerConfig target_normalizer_;
  TimeSeriesDataset ds_;

  ColumnPlan plan_;
  // LoadedRows::category_values and static_ids, until encoded.
  std::vector<std::vector<std::string>> category_values_;
  std::vector<std::int32_t> static_ids_;
};

}  // namespace tft
