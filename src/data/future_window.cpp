#include "data/future_window.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "common/error.h"
#include "data/iso8601.h"

namespace tft {

namespace {

constexpr std::int64_t kMicrosPerDay = 86'400'000'000LL;
constexpr const char* kRelativeTimeIdx = "relative_time_idx";

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// 0 = Monday ... 6 = Sunday of an instant (UTC date).
int weekday_of(std::int64_t micros) {
  const std::int64_t days = floor_div(micros, kMicrosPerDay);
  return static_cast<int>(((days + 3) % 7 + 7) % 7);  // 1970-01-01 was a Thursday
}

// Calendar fields of a stored time (UTC for date-times), or nothing for an integer time.
std::optional<DateTimeFields> fields_of(const TimeSeriesDataset& dataset, std::int64_t time) {
  if (dataset.time_kind() == TimeKind::Integer) return std::nullopt;
  const bool date_only = dataset.time_kind() == TimeKind::Date && time % kMicrosPerDay == 0;
  const auto parsed = parse_iso8601(format_iso8601(time, date_only));
  if (!parsed) return std::nullopt;
  return parsed->fields;
}

// The value of a calendar feature, or nothing when `name` is not one.
std::optional<int> calendar_value(const std::string& name, const DateTimeFields& f) {
  if (name == "day_of_week") return day_of_week(f.year, f.month, f.day);
  if (name == "month") return f.month;
  if (name == "day_of_month") return f.day;
  if (name == "hour") return f.hour;
  return std::nullopt;
}

bool is_calendar_name(const std::string& name) {
  return name == "day_of_week" || name == "month" || name == "day_of_month" || name == "hour";
}

// How one known input of the decoder is produced for future steps.
struct KnownReal {
  const std::vector<float>* column = nullptr;  // null: relative_time_idx (not stored)
  bool calendar = false;                       // recompute from the future time
  ScalerStats stats;
};
struct KnownCategorical {
  const std::vector<std::int32_t>* column = nullptr;
  const CategoricalEncoder* encoder = nullptr;
  bool calendar = false;
};

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

}  // namespace

SeriesTimeStep series_time_step(const TimeSeriesDataset& dataset, std::size_t series) {
  const SeriesInfo& info = dataset.series().at(series);
  const auto& times = dataset.times();
  const auto first = static_cast<std::size_t>(info.offset);
  const auto n = static_cast<std::size_t>(info.length);
  std::map<std::int64_t, std::int64_t> counts;
  const std::size_t from = n > 257 ? n - 257 : 0;
  for (std::size_t i = from + 1; i < n; ++i) ++counts[times[first + i] - times[first + i - 1]];
  SeriesTimeStep result;
  std::int64_t best = 0;
  for (const auto& [difference, count] : counts) {  // ascending: ties keep the smaller step
    if (count > best) {
      best = count;
      result.step = difference;
    }
  }
  if (dataset.time_kind() == TimeKind::Date && result.step == kMicrosPerDay && n >= 10) {
    result.business_days = true;
    for (std::size_t i = 0; i < n && result.business_days; ++i) {
      result.business_days = weekday_of(times[first + i]) < 5;
    }
  }
  return result;
}

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
  const InputSchema& schema = dataset.schema();
  const DataTransforms& transforms = dataset.transforms();
  const StandardScaler& scaler = transforms.scaler;
  const std::int64_t enc = dataset.encoder_length();
  const std::int64_t dec = dataset.prediction_length();
  const BatchWidths w = dataset.widths();
  const auto b = static_cast<std::int64_t>(series.size());
  const double inv_enc = 1.0 / static_cast<double>(enc);

  TrainingBatch batch = empty_batch(dataset, b);
  TFTBatch& in = batch.inputs;
  batch.targets.fill_(std::numeric_limits<float>::quiet_NaN());  // the future is unknown

  const std::vector<std::string> historical_reals = schema.historical_reals();
  const std::vector<CategoricalVariable> historical_cats = schema.historical_categoricals();
  std::vector<const std::vector<float>*> encoder_real_columns;
  for (const std::string& name : historical_reals) {
    encoder_real_columns.push_back(stored_real(dataset, name));
  }
  std::vector<const std::vector<std::int32_t>*> encoder_cat_columns;
  for (const CategoricalVariable& v : historical_cats) {
    encoder_cat_columns.push_back(&dataset.categorical_column(v.name));
  }

  // Per-sample scratch for fill_sample (used for the static inputs only).
  std::vector<float> s_reals(static_cast<std::size_t>(w.static_reals));
  std::vector<std::int64_t> s_cats(static_cast<std::size_t>(w.static_categoricals));
  std::vector<float> e_reals(static_cast<std::size_t>(enc * w.encoder_reals));
  std::vector<std::int64_t> e_cats(static_cast<std::size_t>(enc * w.encoder_categoricals));
  std::vector<float> d_reals(static_cast<std::size_t>(dec * w.decoder_reals));
  std::vector<std::int64_t> d_cats(static_cast<std::size_t>(dec * w.decoder_categoricals));
  std::vector<float> targets(static_cast<std::size_t>(dec));
  std::vector<std::int64_t> times(static_cast<std::size_t>(dec));

  float* out_sr = in.static_reals.data_ptr<float>();
  std::int64_t* out_sc = in.static_categoricals.data_ptr<std::int64_t>();
  float* out_er = in.encoder_reals.data_ptr<float>();
  std::int64_t* out_ec = in.encoder_categoricals.data_ptr<std::int64_t>();
  float* out_dr = in.decoder_reals.data_ptr<float>();
  std::int64_t* out_dc = in.decoder_categoricals.data_ptr<std::int64_t>();
  std::int64_t* out_series = batch.series.data_ptr<std::int64_t>();
  std::int64_t* out_times = batch.decoder_times.data_ptr<std::int64_t>();
  double* out_center = batch.target_center.data_ptr<double>();
  double* out_scale = batch.target_scale.data_ptr<double>();

  for (std::int64_t i = 0; i < b; ++i) {
    const std::uint32_t s = series[static_cast<std::size_t>(i)];
    if (s >= dataset.series().size()) {
      throw DataError("future window: series " + std::to_string(s) + " is out of range");
    }
    const SeriesInfo& info = dataset.series()[s];
    const std::size_t scaler_row = scaler.find_group(info.group_values).value_or(0);
    auto stats_of = [&](const std::string& name) {
      return scaler.stats(scaler_row, scaler.column_index(name).value_or(0));
    };
    auto scaled = [](float value, const ScalerStats& st) {
      return static_cast<float>((static_cast<double>(value) - st.mean) / st.scale);
    };

    // Static inputs: as in any window of the series.
    SampleBuffers buffers{s_reals.data(), s_cats.data(),  e_reals.data(), e_cats.data(),
                          d_reals.data(), d_cats.data(), targets.data(),  times.data()};
    dataset.fill_sample(Window{s, 0}, buffers);
    std::copy(s_reals.begin(), s_reals.end(), out_sr + i * w.static_reals);
    std::copy(s_cats.begin(), s_cats.end(), out_sc + i * w.static_categoricals);

    const std::int64_t last_row = info.offset + info.length - 1;
    const std::int64_t base = info.offset + info.length - enc;

    // Encoder: the last encoder_length rows, as fill_sample scales them.
    const ScalerStats target = dataset.target_normalization(s, info.length - enc);
    out_center[i] = target.mean;
    out_scale[i] = target.scale;
    for (std::size_t j = 0; j < historical_reals.size(); ++j) {
      const std::vector<float>* column = encoder_real_columns[j];
      const bool is_target = historical_reals[j] == schema.target;
      const ScalerStats st = column && !is_target ? stats_of(historical_reals[j]) : ScalerStats{};
      for (std::int64_t t = 0; t < enc; ++t) {
        float value;
        if (!column) {
          value = static_cast<float>((static_cast<double>(t) - static_cast<double>(enc)) * inv_enc);
        } else if (is_target) {
          value = static_cast<float>(
              dataset.normalize_target((*column)[static_cast<std::size_t>(base + t)], target));
        } else {
          value = scaled((*column)[static_cast<std::size_t>(base + t)], st);
        }
        out_er[(i * enc + t) * w.encoder_reals + static_cast<std::int64_t>(j)] = value;
      }
    }
    for (std::size_t j = 0; j < historical_cats.size(); ++j) {
      for (std::int64_t t = 0; t < enc; ++t) {
        out_ec[(i * enc + t) * w.encoder_categoricals + static_cast<std::int64_t>(j)] =
            (*encoder_cat_columns[j])[static_cast<std::size_t>(base + t)];
      }
    }

    // Decoder: future times and known inputs.
    const std::vector<std::int64_t> future = future_times(dataset, s);
    std::vector<std::optional<DateTimeFields>> future_fields;
    for (std::int64_t t : future) future_fields.push_back(fields_of(dataset, t));
    std::copy(future.begin(), future.end(), out_times + i * dec);
    const std::int64_t check_from = std::max(info.offset, last_row + 1 - kCalendarCheckRows);
    auto agrees_with_calendar = [&](const std::string& name, auto&& stored_equals) {
      if (!is_calendar_name(name)) return false;
      for (std::int64_t row = check_from; row <= last_row; ++row) {
        const auto f = fields_of(dataset, dataset.times()[static_cast<std::size_t>(row)]);
        if (!f || !stored_equals(row, *calendar_value(name, *f))) return false;
      }
      for (const auto& f : future_fields) {
        if (!f) return false;
      }
      return true;
    };

    for (std::size_t j = 0; j < schema.known_reals.size(); ++j) {
      const std::string& name = schema.known_reals[j];
      KnownReal k;
      k.column = stored_real(dataset, name);
      if (k.column) {
        k.stats = stats_of(name);
        k.calendar = agrees_with_calendar(name, [&](std::int64_t row, int value) {
          return (*k.column)[static_cast<std::size_t>(row)] == static_cast<float>(value);
        });
      }
      for (std::int64_t t = 0; t < dec; ++t) {
        float value;
        if (!k.column) {
          value = static_cast<float>(static_cast<double>(t) * inv_enc);
        } else if (k.calendar) {
          value = scaled(static_cast<float>(
                             *calendar_value(name, *future_fields[static_cast<std::size_t>(t)])),
                         k.stats);
        } else {
          value = scaled((*k.column)[static_cast<std::size_t>(last_row)], k.stats);
        }
        out_dr[(i * dec + t) * w.decoder_reals + static_cast<std::int64_t>(j)] = value;
      }
    }
    for (std::size_t j = 0; j < schema.known_categoricals.size(); ++j) {
      const std::string& name = schema.known_categoricals[j].name;
      KnownCategorical k;
      k.column = &dataset.categorical_column(name);
      k.encoder = &transforms.encoders.at(name);
      k.calendar = agrees_with_calendar(name, [&](std::int64_t row, int value) {
        const std::int32_t code = (*k.column)[static_cast<std::size_t>(row)];
        return code > 0 && k.encoder->decode(code) == std::to_string(value);
      });
      for (std::int64_t t = 0; t < dec; ++t) {
        const std::int64_t code =
            k.calendar ? k.encoder->encode(std::to_string(
                             *calendar_value(name, *future_fields[static_cast<std::size_t>(t)])))
                       : (*k.column)[static_cast<std::size_t>(last_row)];
        out_dc[(i * dec + t) * w.decoder_categoricals + static_cast<std::int64_t>(j)] = code;
      }
    }
    out_series[i] = s;
  }
  return batch;
}

}  // namespace tft
