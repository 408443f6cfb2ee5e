// Many time series from one long-format CSV or Parquet file (data_file.h): one row per
// (series, time step), the series identified by the values of data.group_columns. Rows of
// different series may interleave in the file; within a series they must be in strictly
// increasing time order.
//
// Loading (all or nothing; every problem is a tft::DataError "file:line: column 'x': ...", or
// "file: row R (row group G): column 'x': ..." for Parquet):
//   1. the header (a Parquet file's schema) must hold every configured column (derived
//      features aside);
//   2. each row: the time (an integer, or an ISO 8601 text (iso8601.h), a Parquet date or
//      timestamp), the series, and the value of every used column; missing values (CSV:
//      data.na_values; Parquet: nulls and NaN) follow data.missing_values; static columns
//      must be constant within a series;
//   3. rows are stored per series, column by column (float32 reals, int32 codes, int64 times);
//   4. every series must hold at least one window (encoder_length + prediction_length rows);
//      the split keeps its last rows for validation (window_sampler.h);
//   5. categorical encoders and scalers are fitted on the training part of each series only
//      (or taken from fitted transforms), and the windows are listed.
// The steps are DatasetBuilder's (dataset_builder.h): reading in column_plan.h, row_reader.h
// and series_storage.h, fitting in dataset_fitting.cpp, windowing in dataset_windows.cpp.
//
// Memory: the columns plus 8 bytes per window; a window is gathered into a batch only when it
// is used (fill_sample, and batch.h for tensors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/train_config.h"
#include "data/categorical_encoder.h"
#include "data/scaler.h"
#include "data/window_sampler.h"
#include "model/model_config.h"
#include "readers/csv_reader.h"
#include "readers/row_source.h"
#include "readers/time_column.h"

namespace tft {

// Everything fitted on training data that a model needs to see new data the same way; store
// it with the model (to_json) and load new data with it.
struct DataTransforms {
  // How the target is normalised (data.target_normalizer; data/target_normalizer.h).
  TargetNormalizerConfig target_normalizer;
  // Target and time-varying reals (data.scaling); columns named as in the CSV (derived
  // calendar reals by their feature name). The target's statistics are of its transformed
  // values, by the normaliser's method.
  StandardScaler scaler;
  // Static reals: global, or none when data.scaling is none.
  StandardScaler static_scaler;
  // Every categorical column (static, known, unknown, derived), by name.
  std::map<std::string, CategoricalEncoder> encoders;
  // Rows per season of the decoder's target centers under target_normalizer.center seasonal
  // (model.seasonality, or inferred from the time step when loading); 0 otherwise.
  std::int64_t target_season = 0;
  // Forecasts give their median as a whole number (output.median_rounding resolved when the
  // model was fitted; report/forecast_units.h).
  bool whole_number_median = false;

  // {"format": "tftrain-data-transforms", "version": 2, "target_normalizer": {...},
  //  "target_season": 24, "whole_number_median": true, "scaler": {...}, "static_scaler": {...},
  //  "encoders": {"store": {"categories": [...]}}}
  // Version 1 (no target_normalizer) reads as scope series, standard, no transformation; a
  // file without target_season (written before center: seasonal existed) as 0; one without
  // whole_number_median (written before output.median_rounding existed) as false.
  nlohmann::json to_json() const;
  // DataError when the JSON is not such an object.
  static DataTransforms from_json(const nlohmann::json& json);
};

bool operator==(const DataTransforms& a, const DataTransforms& b);

// A resolved target normalisation to switch to (TimeSeriesDataset::recenter).
struct TargetChoice {
  TargetScope scope = TargetScope::Encoder;
  TargetCenter center = TargetCenter::Last;
  std::int64_t season = 0;  // rows, for center seasonal
};

struct SeriesInfo {
  std::vector<std::string> group_values;  // one per data.group_columns
  std::string label;                      // for messages: 'A', store=1, item=2, or (all rows)
  std::size_t first_line = 0;             // position of its first row (RowSource)
  std::int64_t offset = 0;                // its first row in the column storage
  std::int64_t length = 0;                // its rows
  std::int64_t train_rows = 0;            // rows [0, train_rows) are the training part
};

// Widths of the batch tensors' last dimension (TFTBatch order, model/tft_batch.h).
struct BatchWidths {
  std::int64_t static_reals = 0;
  std::int64_t static_categoricals = 0;
  std::int64_t encoder_reals = 0;  // unknown_reals, known_reals, target
  std::int64_t encoder_categoricals = 0;
  std::int64_t decoder_reals = 0;  // known_reals
  std::int64_t decoder_categoricals = 0;
};

// Where fill_sample writes one sample. Sizes: static_* [width], encoder_* [T_enc * width],
// decoder_* [T_dec * width] (row-major, time first), targets and decoder_times [T_dec].
// A pointer may be null when its width is 0.
struct SampleBuffers {
  float* static_reals = nullptr;
  std::int64_t* static_categoricals = nullptr;
  float* encoder_reals = nullptr;
  std::int64_t* encoder_categoricals = nullptr;
  float* decoder_reals = nullptr;
  std::int64_t* decoder_categoricals = nullptr;
  float* targets = nullptr;
  std::int64_t* decoder_times = nullptr;
  double* target_center = nullptr;   // [1] the window's target normalisation
  double* target_scale = nullptr;    // [1]
  double* decoder_center = nullptr;  // [T_dec] each decoder step's center (decoder_center())
};

// How loading with transforms fitted before treats what they do not cover. The defaults are
// predict's rules; a refit (train/refit.h) chooses by training.init_scalers and
// training.init_categories.
struct FittedTransformsUse {
  // Fit the reals' scalers on this data's training parts instead of taking the fitted ones
  // (the target normaliser's scope, center, method and season stay the fitted ones).
  bool refit_scalers = false;
  // per_series scaling: a series the fitted scaler lacks gets the statistics of its own training
  // part, instead of an error naming it.
  bool fit_unseen_series = false;
  // A category an encoder lacks gets the next free code (the encoder grows; the model's
  // embedding must grow with it), instead of the unknown bucket, 0.
  bool grow_categories = false;
};

class TimeSeriesDataset {
 public:
  // Reads config.data.path (IoError when unreadable, ConfigError when empty) and fits the
  // transforms.
  static TimeSeriesDataset load(const TrainConfig& config);
  // Reads config.data.path with transforms fitted before: nothing is refitted; categories
  // not known to an encoder map to 0; with per_series scaling every series must be known to
  // the scaler.
  static TimeSeriesDataset load(const TrainConfig& config, const DataTransforms& fitted);
  // The same from a tokenizer (CSV text in memory: CsvReader(name, text, delimiter)).
  // `fitted` may be null (fit here).
  static TimeSeriesDataset from_reader(CsvReader reader, const TrainConfig& config,
                                       const DataTransforms* fitted = nullptr);
  // The same from any source of rows (row_source.h): what the others come down to. An Arrow
  // stream's rows (arrow_data.h) come this way; config.data.path is not used.
  static TimeSeriesDataset from_source(RowSource& source, const TrainConfig& config,
                                       const DataTransforms* fitted = nullptr,
                                       const FittedTransformsUse& use = {});

  // The model's input schema: variables by role, categorical cardinalities from the encoders,
  // embedding_dim from the config.
  const InputSchema& schema() const { return schema_; }
  const DataTransforms& transforms() const { return transforms_; }
  // Why the target has its center (transforms().target_normalizer.center): "configured",
  // "the saved model's", or center auto's reason ("auto: sub-daily data, a season of 48 rows
  // (model.seasonality)").
  const std::string& target_center_reason() const { return target_center_reason_; }
  // center auto resolved here by the time-step rule alone (no evidence yet): the trainer may
  // choose again by pilot fits (train/center_selection.h) and recenter().
  bool target_center_is_provisional() const { return center_provisional_; }
  // The season a seasonal center would use, in rows (model.seasonality, the saved model's, or
  // inferred from the time step), whether or not the center is seasonal; 0: none known.
  std::int64_t known_season() const { return known_season_; }

  // Another normalisation of the target (scope and center resolved: no auto; `season` rows
  // for center seasonal, > 0 and within the encoder, else ignored), with `reason` as
  // target_center_reason(). The series' statistics depend on none of them, so nothing is
  // refitted. ConfigError for an unresolved, contradictory or unfitting choice.
  void recenter(const TargetChoice& choice, std::string reason);

  // A dataset for a pilot fit on the training part alone: each series cut to its training
  // rows, whose last rows (config.split's rule applied to them; 20% when it has none) become
  // the validation part, windowed by config.windows; the scalers refitted on what is left, the
  // target normalised by `choice`; the encoders kept. Windows are thinned evenly to at most
  // `max_training_windows` and `max_validation_windows`. Nothing when no series leaves a
  // validation window.
  std::optional<TimeSeriesDataset> training_holdout(const TrainConfig& config,
                                                    const TargetChoice& choice,
                                                    std::size_t max_training_windows,
                                                    std::size_t max_validation_windows) const;
  // A rolling-origin backtest's fold (train/backtest.h): each series cut to its first rows[s]
  // rows, then split by config.split and windowed by config.windows as if its data ended there.
  // The reals' scalers are refitted on the cut training parts unless `kept` is given (a refit
  // from the fold before keeps its scaler); the encoders and the target normaliser stay.
  // DataError when rows[s] exceeds a series' length.
  TimeSeriesDataset cut_at(const TrainConfig& config, const std::vector<std::int64_t>& rows,
                           const StandardScaler* kept = nullptr) const;

  // The same rows and transforms with one validation window per series whose decoder starts
  // at row origins[s] (its encoder the encoder_length rows before), and no training windows:
  // a fold's forecasts, whose actuals are the rows after the cut. full_lengths[s] is the series'
  // length before any cut_at (the rows stay stored); a series whose window does not fit gets
  // none.
  TimeSeriesDataset windows_at(const std::vector<std::int64_t>& origins,
                               const std::vector<std::int64_t>& full_lengths) const;

  const std::vector<SeriesInfo>& series() const { return series_; }
  std::int64_t num_rows() const { return static_cast<std::int64_t>(times_.size()); }
  std::int64_t encoder_length() const { return encoder_length_; }
  std::int64_t prediction_length() const { return prediction_length_; }
  TimeKind time_kind() const { return time_kind_; }
  // A time value as text: the integer, "2020-03-01" (Date), or a date-time as it was read:
  // "2020-03-01T14:30:00" when no time carried a zone, else in UTC, "2020-03-01T14:30:00Z".
  std::string format_time(std::int64_t value) const;
  // Some date-time was read with a zone (Z, an offset, a zoned timestamp): format_time writes
  // every date-time in UTC.
  bool times_have_zone() const { return times_have_zone_; }

  const std::vector<Window>& training_windows() const { return training_windows_; }
  const std::vector<Window>& validation_windows() const { return validation_windows_; }

  // Raw column access (original units), rows in storage order (series after series).
  const std::vector<std::int64_t>& times() const { return times_; }
  // A stored time-varying real (target, known or unknown real, derived calendar real); throws
  // DataError for other names.
  const std::vector<float>& real_column(const std::string& name) const;
  // Codes of a time-varying categorical (encoded; 0 = unknown).
  const std::vector<std::int32_t>& categorical_column(const std::string& name) const;
  // Per categorical column (static and time-varying, by name): how many values fell into the
  // unknown bucket (code 0) because the fitted encoder had not seen them: series for a static
  // column, rows for a time-varying one. Columns without any are left out.
  std::map<std::string, std::int64_t> unknown_category_counts() const;
  // Rows dropped (missing_values: drop_row) and values filled (forward_fill) while loading.
  std::int64_t dropped_rows() const { return dropped_rows_; }
  std::int64_t filled_values() const { return filled_values_; }

  // The target statistics fitted on a series' training part (mean 0, scale 1 when the
  // target is not scaled), of the transformed target.
  ScalerStats target_stats(std::size_t series) const;
  // The center and scale of the target in the window of `series` whose encoder starts at row
  // `encoder_start` (counted from the series' first row): target_stats (scope series), or
  // fitted on the window's encoder steps (scope encoder), with the scale at least
  // encoder_scale_floor(target_stats) and 1 where the window is flat.
  ScalerStats target_normalization(std::size_t series, std::int64_t encoder_start) const;
  // The center of decoder step h's target in a window whose last encoder row is `last_row`
  // (a storage row) and whose normalisation is `window`: window.mean, or under center
  // seasonal T(y) of the row one season earlier (seasonal_naive_row, data/seasonality.h). The
  // model predicts (T(y) - decoder center) / window.scale, so an output of 0 is the naive
  // (center last) or the seasonal naive (center seasonal) forecast.
  double decoder_center(std::size_t last_row, std::int64_t h, const ScalerStats& window) const;
  // (T(y) - center) / scale: what the model sees and predicts.
  double normalize_target(double y, const ScalerStats& stats) const;
  // T^-1(z * scale + center): a prediction back in original units.
  double denormalize_target(double z, const ScalerStats& stats) const;

  BatchWidths widths() const { return widths_; }
  // Writes the window's sample: reals scaled, categoricals as codes, the target (input and
  // decoder targets) normalised with target_normalization, decoder_times the time column's
  // values of the decoder steps, and that normalisation.
  void fill_sample(const Window& window, const SampleBuffers& out) const;

  // Bytes of the column storage and window lists: what grows with the data.
  std::size_t storage_bytes() const;
  // Bytes that materialising every window (training and validation) as float32 inputs and
  // targets would take instead: data x window length.
  std::size_t materialized_window_bytes() const;

 private:
  friend class DatasetBuilder;
  TimeSeriesDataset() = default;

  // This dataset with each series cut to lengths[s] rows, split by `split` and windowed by
  // `windows`; the scaler refitted on the cut training parts with `normalizer`'s method when it
  // is given. What training_holdout and cut_at share.
  TimeSeriesDataset cut(const std::vector<std::int64_t>& lengths, const SplitConfig& split,
                        const WindowConfig& windows,
                        const TargetNormalizerConfig* normalizer) const;

  // fill_sample's static inputs of `series`.
  void fill_static_inputs(std::size_t series, const SampleBuffers& out) const;

  InputSchema schema_;
  DataTransforms transforms_;
  std::string target_center_reason_;
  bool center_provisional_ = false;
  std::int64_t known_season_ = 0;
  std::vector<SeriesInfo> series_;
  std::int64_t encoder_length_ = 0;
  std::int64_t prediction_length_ = 0;
  TimeKind time_kind_ = TimeKind::Integer;
  bool times_have_zone_ = false;  // some time was written with Z, an offset, or a zone

  std::vector<std::int64_t> times_;
  std::vector<std::string> real_names_;
  std::vector<std::vector<float>> reals_;
  std::vector<std::string> categorical_names_;
  std::vector<std::vector<std::int32_t>> categoricals_;
  std::vector<double> static_reals_;               // series x static_reals, raw
  std::vector<std::int64_t> static_categoricals_;  // series x static_categoricals, codes

  // Per series: its row in transforms_.scaler (unused with mode none).
  std::vector<std::size_t> scaler_row_;
  // Per stored real: its column in transforms_.scaler; per static real: its column in
  // transforms_.static_scaler.
  std::vector<std::size_t> scaler_column_;
  std::vector<std::size_t> static_scaler_column_;
  // Gather plans: indices into reals_ / categoricals_; kRelativeTimeIdx for the derived
  // window position.
  static constexpr int kRelativeTimeIdx = -1;
  std::vector<int> encoder_real_plan_;
  std::vector<int> decoder_real_plan_;
  std::vector<int> encoder_categorical_plan_;
  std::vector<int> decoder_categorical_plan_;
  int target_index_ = 0;
  BatchWidths widths_;

  std::vector<Window> training_windows_;
  std::vector<Window> validation_windows_;
  std::int64_t dropped_rows_ = 0;
  std::int64_t filled_values_ = 0;
};

}  // namespace tft
