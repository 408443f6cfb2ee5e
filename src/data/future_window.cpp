#include "data/future_window.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "common/error.h"
#include "readers/derived_features.h"
#include "readers/iso8601.h"

namespace tft {

namespace {

constexpr const char* kRelativeTimeIdx = "relative_time_idx";

// Calendar fields of a stored time (UTC for date-times), or nothing for an integer time.
std::optional<DateTimeFields> fields_of(const TimeSeriesDataset& dataset, std::int64_t time) {
  if (dataset.time_kind() == TimeKind::Integer) return std::nullopt;
  const bool date_only = dataset.time_kind() == TimeKind::Date && time % kMicrosPerDay == 0;
  const auto parsed = parse_iso8601(format_iso8601(time, date_only));
  if (!parsed) return std::nullopt;
  return parsed->fields;
}

const std::vector<float>* stored_real(const TimeSeriesDataset& dataset, const std::string& name) {
  try {
    return &dataset.real_column(name);
  } catch (const DataError&) {
    if (name == kRelativeTimeIdx) return nullptr;
    throw;
  }
}

// Rows of the series checked against the calendar.
constexpr std::int64_t kCalendarCheckRows = 32;

float scaled(float value, const ScalerStats& stats) {
  return static_cast<float>((static_cast<double>(value) - stats.mean) / stats.scale);
}

// Writes the inputs of one future sample (of series `s`) into `out`, a sample of the batch.
class FutureSampleWriter {
 public:
  FutureSampleWriter(const TimeSeriesDataset& dataset, std::uint32_t s, const SampleBuffers& out)
      : dataset_(dataset),
        schema_(dataset.schema()),
        scaler_(dataset.transforms().scaler),
        info_(dataset.series()[s]),
        series_(s),
        out_(out),
        enc_(dataset.encoder_length()),
        dec_(dataset.prediction_length()),
        inv_enc_(1.0 / static_cast<double>(enc_)),
        widths_(dataset.widths()),
        scaler_row_(scaler_.find_group(info_.group_values).value_or(0)),
        last_row_(info_.offset + info_.length - 1) {}

  void write() {
    write_static_inputs();
    write_encoder_reals();
    write_encoder_categoricals();
    write_future_times();
    write_known_reals();
    write_known_categoricals();
  }

 private:
  ScalerStats stats_of(const std::string& name) const {
    return scaler_.stats(scaler_row_, scaler_.column_index(name).value_or(0));
  }

  // Static inputs: as in any window of the series. fill_sample also writes the inputs of the
  // series' first window, which the steps below overwrite; targets stay NaN.
  void write_static_inputs() {
    SampleBuffers first = out_;
    first.targets = nullptr;
    first.decoder_times = nullptr;
    dataset_.fill_sample(Window{series_, 0}, first);
  }

  // Encoder: the last encoder_length rows, as fill_sample scales them.
  void write_encoder_reals() {
    const std::int64_t base = info_.offset + info_.length - enc_;
    const ScalerStats target = dataset_.target_normalization(series_, info_.length - enc_);
    *out_.target_center = target.mean;
    *out_.target_scale = target.scale;
    for (std::int64_t h = 0; h < dataset_.prediction_length(); ++h) {
      out_.decoder_center[h] =
          dataset_.decoder_center(static_cast<std::size_t>(base + enc_ - 1), h, target);
    }
    const std::vector<std::string> names = schema_.historical_reals();
    for (std::size_t j = 0; j < names.size(); ++j) {
      const std::vector<float>* column = stored_real(dataset_, names[j]);
      const bool is_target = names[j] == schema_.target;
      const ScalerStats st = column && !is_target ? stats_of(names[j]) : ScalerStats{};
      for (std::int64_t t = 0; t < enc_; ++t) {
        float value;
        if (!column) {
          value =
              static_cast<float>((static_cast<double>(t) - static_cast<double>(enc_)) * inv_enc_);
        } else if (is_target) {
          value = static_cast<float>(
              dataset_.normalize_target((*column)[static_cast<std::size_t>(base + t)], target));
        } else {
          value = scaled((*column)[static_cast<std::size_t>(base + t)], st);
        }
        out_.encoder_reals[t * widths_.encoder_reals + static_cast<std::int64_t>(j)] = value;
      }
    }
  }

  void write_encoder_categoricals() {
    const std::int64_t base = info_.offset + info_.length - enc_;
    const std::vector<CategoricalVariable> variables = schema_.historical_categoricals();
    for (std::size_t j = 0; j < variables.size(); ++j) {
      const std::vector<std::int32_t>& column = dataset_.categorical_column(variables[j].name);
      for (std::int64_t t = 0; t < enc_; ++t) {
        out_.encoder_categoricals[t * widths_.encoder_categoricals + static_cast<std::int64_t>(j)] =
            column[static_cast<std::size_t>(base + t)];
      }
    }
  }

  void write_future_times() {
    const std::vector<std::int64_t> future = future_times(dataset_, series_);
    for (std::int64_t t : future) future_fields_.push_back(fields_of(dataset_, t));
    std::copy(future.begin(), future.end(), out_.decoder_times);
  }

  // Whether the stored column `name` is a calendar feature that agrees with the calendar on
  // the series' last rows (`stored_equals(row, value)`), and every future time has fields.
  template <typename StoredEquals>
  bool agrees_with_calendar(const std::string& name, StoredEquals&& stored_equals) const {
    const DerivedFeature feature = derived_feature(name);
    if (!is_calendar_feature(feature)) return false;
    const std::int64_t check_from = std::max(info_.offset, last_row_ + 1 - kCalendarCheckRows);
    for (std::int64_t row = check_from; row <= last_row_; ++row) {
      const auto f = fields_of(dataset_, dataset_.times()[static_cast<std::size_t>(row)]);
      if (!f || !stored_equals(row, calendar_value(feature, *f))) return false;
    }
    for (const auto& f : future_fields_) {
      if (!f) return false;
    }
    return true;
  }

  int future_calendar_value(const std::string& name, std::int64_t t) const {
    return calendar_value(derived_feature(name), *future_fields_[static_cast<std::size_t>(t)]);
  }

  // Known reals: relative_time_idx as in every window, calendar features recomputed, the
  // others' last value carried forward.
  void write_known_reals() {
    for (std::size_t j = 0; j < schema_.known_reals.size(); ++j) {
      const std::string& name = schema_.known_reals[j];
      const std::vector<float>* column = stored_real(dataset_, name);
      ScalerStats stats;
      bool calendar = false;
      if (column) {
        stats = stats_of(name);
        calendar = agrees_with_calendar(name, [&](std::int64_t row, int value) {
          return (*column)[static_cast<std::size_t>(row)] == static_cast<float>(value);
        });
      }
      for (std::int64_t t = 0; t < dec_; ++t) {
        float value;
        if (!column) {
          value = static_cast<float>(static_cast<double>(t) * inv_enc_);
        } else if (calendar) {
          value = scaled(static_cast<float>(future_calendar_value(name, t)), stats);
        } else {
          value = scaled((*column)[static_cast<std::size_t>(last_row_)], stats);
        }
        out_.decoder_reals[t * widths_.decoder_reals + static_cast<std::int64_t>(j)] = value;
      }
    }
  }

  void write_known_categoricals() {
    for (std::size_t j = 0; j < schema_.known_categoricals.size(); ++j) {
      const std::string& name = schema_.known_categoricals[j].name;
      const std::vector<std::int32_t>& column = dataset_.categorical_column(name);
      const CategoricalEncoder& encoder = dataset_.transforms().encoders.at(name);
      const bool calendar = agrees_with_calendar(name, [&](std::int64_t row, int value) {
        const std::int32_t code = column[static_cast<std::size_t>(row)];
        return code > 0 && encoder.decode(code) == std::to_string(value);
      });
      for (std::int64_t t = 0; t < dec_; ++t) {
        const std::int64_t code =
            calendar ? encoder.encode(std::to_string(future_calendar_value(name, t)))
                     : column[static_cast<std::size_t>(last_row_)];
        out_.decoder_categoricals[t * widths_.decoder_categoricals + static_cast<std::int64_t>(j)] =
            code;
      }
    }
  }

  const TimeSeriesDataset& dataset_;
  const InputSchema& schema_;
  const StandardScaler& scaler_;
  const SeriesInfo& info_;
  const std::uint32_t series_;
  const SampleBuffers out_;
  const std::int64_t enc_;
  const std::int64_t dec_;
  const double inv_enc_;
  const BatchWidths widths_;
  const std::size_t scaler_row_;
  const std::int64_t last_row_;
  std::vector<std::optional<DateTimeFields>> future_fields_;
};

}  // namespace

std::vector<std::int64_t> future_times(const TimeSeriesDataset& dataset, std::size_t series) {
  const SeriesInfo& info = dataset.series().at(series);
  const SeriesTimeStep step = series_time_step(dataset, series);
  std::vector<std::int64_t> out;
  std::int64_t t = dataset.times()[static_cast<std::size_t>(info.offset + info.length - 1)];
  for (std::int64_t h = 0; h < dataset.prediction_length(); ++h) {
    t += step.step;
    while (step.business_days && weekday_of(t) >= 5) t += kMicrosPerDay;
    out.push_back(t);
  }
  return out;
}

TrainingBatch gather_future_batch(const TimeSeriesDataset& dataset,
                                  const std::vector<std::uint32_t>& series) {
  const auto b = static_cast<std::int64_t>(series.size());
  TrainingBatch batch = empty_batch(dataset, b);
  batch.targets.fill_(std::numeric_limits<float>::quiet_NaN());  // the future is unknown
  std::int64_t* out_series = batch.series.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < b; ++i) {
    const std::uint32_t s = series[static_cast<std::size_t>(i)];
    if (s >= dataset.series().size()) {
      throw DataError("future window: series " + std::to_string(s) + " is out of range");
    }
    FutureSampleWriter(dataset, s, sample_buffers(batch, dataset, i)).write();
    out_series[i] = s;
  }
  return batch;
}

}  // namespace tft
