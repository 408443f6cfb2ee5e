#include "data/time_series_dataset.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/format.h"
#include "data/data_file.h"
#include "data/iso8601.h"
#include "data/target_normalizer.h"

namespace tft {

namespace {

// ---------------------------------------------------------------------------------------
// Derived features

enum class Derived { None, DayOfWeek, Month, DayOfMonth, Hour, RelativeTimeIdx };

Derived derived_kind(const std::string& name) {
  if (name == "day_of_week") return Derived::DayOfWeek;
  if (name == "month") return Derived::Month;
  if (name == "day_of_month") return Derived::DayOfMonth;
  if (name == "hour") return Derived::Hour;
  if (name == "relative_time_idx") return Derived::RelativeTimeIdx;
  return Derived::None;
}

// The value range of a calendar feature.
int derived_low(Derived d) { return d == Derived::Month || d == Derived::DayOfMonth ? 1 : 0; }
int derived_high(Derived d) {
  switch (d) {
    case Derived::DayOfWeek:
      return 6;
    case Derived::Month:
      return 12;
    case Derived::DayOfMonth:
      return 31;
    case Derived::Hour:
      return 23;
    default:
      return 0;
  }
}

int derived_value(Derived d, const DateTimeFields& f) {
  switch (d) {
    case Derived::DayOfWeek:
      return day_of_week(f.year, f.month, f.day);
    case Derived::Month:
      return f.month;
    case Derived::DayOfMonth:
      return f.day;
    case Derived::Hour:
      return f.hour;
    default:
      return 0;
  }
}

// The fixed vocabulary of a calendar categorical: every value of its range, in numeric order,
// so codes do not depend on which values the training part happens to contain.
std::vector<std::string> derived_domain(Derived d) {
  std::vector<std::string> values;
  for (int v = derived_low(d); v <= derived_high(d); ++v) values.push_back(std::to_string(v));
  return values;
}

// ---------------------------------------------------------------------------------------
// Field parsing

std::string_view trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

enum class NumberResult { Ok, NotANumber, NotFinite };

NumberResult parse_double(std::string_view text, double& out) {
  std::string_view s = trim(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return NumberResult::NotANumber;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  if (ptr != end) return NumberResult::NotANumber;
  if (ec == std::errc::result_out_of_range) return NumberResult::NotFinite;
  if (ec != std::errc()) return NumberResult::NotANumber;
  return std::isfinite(out) ? NumberResult::Ok : NumberResult::NotFinite;
}

bool parse_int64(std::string_view text, std::int64_t& out) {
  std::string_view s = trim(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

bool looks_like_integer(std::string_view text) {
  std::int64_t ignored = 0;
  return parse_int64(text, ignored);
}

std::string shown(std::string_view value) { return show_string(std::string(value)); }

// String -> dense id, in first-seen order, with a one-entry cache for runs of equal values.
class Interner {
 public:
  explicit Interner(std::vector<std::string> preset = {}) : values_(std::move(preset)) {
    for (std::size_t i = 0; i < values_.size(); ++i) {
      ids_.emplace(values_[i], static_cast<std::int32_t>(i));
    }
  }
  std::int32_t intern(std::string_view value) {
    if (last_id_ >= 0 && value == std::string_view(last_)) return last_id_;
    last_.assign(value.data(), value.size());
    const auto it = ids_.find(last_);
    if (it != ids_.end()) {
      last_id_ = it->second;
    } else {
      last_id_ = static_cast<std::int32_t>(values_.size());
      ids_.emplace(last_, last_id_);
      values_.push_back(last_);
    }
    return last_id_;
  }
  const std::vector<std::string>& values() const { return values_; }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
  std::vector<std::string> values_;
  std::string last_;
  std::int32_t last_id_ = -1;
};

// Where a variable's values come from.
struct Source {
  int column = -1;  // header index, or -1 for a derived feature
  Derived derived = Derived::None;
};

struct RealColumn {
  std::string name;
  Source source;
};

struct CategoricalColumnPlan {
  std::string name;
  Source source;
  std::int64_t embedding_dim = 0;
};

// What loading remembers per series while rows stream in.
struct SeriesState {
  std::int64_t rows = 0;
  std::int64_t last_time = 0;
  std::size_t last_line = 0;
  bool static_set = false;
  std::size_t static_line = 0;
  std::vector<float> last_reals;          // forward fill; NaN: none yet
  std::vector<std::int32_t> last_categoricals;  // forward fill; -1: none yet
  std::vector<double> static_reals;
  std::vector<std::int32_t> static_categoricals;  // raw ids
};

template <typename T>
void permute(std::vector<T>& column, const std::vector<std::size_t>& order) {
  std::vector<T> out(column.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = column[order[i]];
  column.swap(out);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// DataTransforms

nlohmann::json DataTransforms::to_json() const {
  nlohmann::json encoders_json = nlohmann::json::object();
  for (const auto& [name, encoder] : encoders) encoders_json[name] = encoder.to_json();
  return nlohmann::json{{"format", "tftrain-data-transforms"},
                        {"version", 2},
                        {"target_normalizer", target_normalizer_to_json(target_normalizer)},
                        {"scaler", scaler.to_json()},
                        {"static_scaler", static_scaler.to_json()},
                        {"encoders", encoders_json}};
}

DataTransforms DataTransforms::from_json(const nlohmann::json& json) {
  if (!json.is_object() || json.value("format", std::string()) != "tftrain-data-transforms") {
    throw DataError(
        "data transforms: expected an object with \"format\": \"tftrain-data-transforms\"");
  }
  // Version 1 predates data.target_normalizer: its target was scaled like the other reals.
  const bool version_1 = json.contains("version") && json["version"] == 1;
  if (!version_1 && !(json.contains("version") && json["version"] == 2)) {
    throw DataError("data transforms: unsupported version " +
                    (json.contains("version") ? json["version"].dump() : std::string("(none)")) +
                    " (expected 1 or 2)");
  }
  if (!version_1 && !json.contains("target_normalizer")) {
    throw DataError("data transforms: expected key \"target_normalizer\"");
  }
  if (!json.contains("scaler") || !json.contains("static_scaler") ||
      !json.contains("encoders") || !json["encoders"].is_object()) {
    throw DataError("data transforms: expected keys \"scaler\", \"static_scaler\", \"encoders\"");
  }
  DataTransforms t;
  t.target_normalizer = version_1 ? TargetNormalizerConfig{TargetScope::Series,
                                                           TargetCenter::Statistic,
                                                           TargetMethod::Standard,
                                                           TargetTransformation::None}
                                  : target_normalizer_from_json(json["target_normalizer"]);
  t.scaler = StandardScaler::from_json(json["scaler"]);
  t.static_scaler = StandardScaler::from_json(json["static_scaler"]);
  for (auto it = json["encoders"].begin(); it != json["encoders"].end(); ++it) {
    t.encoders.emplace(it.key(), CategoricalEncoder::from_json(it.value()));
  }
  return t;
}

bool operator==(const DataTransforms& a, const DataTransforms& b) {
  return a.target_normalizer == b.target_normalizer && a.scaler == b.scaler &&
         a.static_scaler == b.static_scaler && a.encoders == b.encoders;
}

// ---------------------------------------------------------------------------------------
// Loading

class DatasetBuilder {
 public:
  DatasetBuilder(RowSource& source, const TrainConfig& config, const DataTransforms* fitted)
      : source_(source),
        config_(config),
        data_(config.data),
        fitted_(fitted),
        target_normalizer_(fitted != nullptr ? fitted->target_normalizer
                                             : config.data.target_normalizer) {}

  TimeSeriesDataset build() {
    ds_.encoder_length_ = config_.windows.encoder_length;
    ds_.prediction_length_ = config_.windows.prediction_length;
    plan();
    read_rows();
    reject_time_of_day_on_dates();
    group_rows();
    split();
    encode_categoricals();
    fit_scalers();
    make_schema_and_plans();
    make_windows();
    return std::move(ds_);
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw DataError(source_.where(line) + ": " + what);
  }
  [[noreturn]] void fail_column(std::size_t line, const std::string& column,
                                const std::string& what) const {
    fail(line, "column '" + column + "': " + what);
  }

  // -------------------------------------------------------------------------------------
  // 1. Header -> sources

  void plan() {
    const std::vector<std::string>& header = source_.header();
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (!header_index_.emplace(header[i], static_cast<int>(i)).second) {
        duplicated_.push_back(header[i]);
      }
    }
    time_col_ = header_column(data_.time_column, "data.time_column");
    for (std::size_t i = 0; i < data_.group_columns.size(); ++i) {
      group_cols_.push_back(header_column(data_.group_columns[i],
                                       "data.group_columns[" + std::to_string(i) + "]"));
    }
    auto real_source = [&](const std::string& name, const std::string& key, bool known) {
      return source(name, key, known, /*categorical=*/false);
    };
    for (std::size_t i = 0; i < data_.unknown_reals.size(); ++i) {
      add_real(data_.unknown_reals[i],
               real_source(data_.unknown_reals[i],
                           "data.unknown_reals[" + std::to_string(i) + "]", false));
    }
    for (std::size_t i = 0; i < data_.known_reals.size(); ++i) {
      const Source s = real_source(data_.known_reals[i],
                                   "data.known_reals[" + std::to_string(i) + "]", true);
      if (s.derived != Derived::RelativeTimeIdx) add_real(data_.known_reals[i], s);
    }
    add_real(data_.target, real_source(data_.target, "data.target", false));

    auto add_categoricals = [&](const std::vector<CategoricalColumn>& columns,
                                const char* group, bool known) {
      for (std::size_t i = 0; i < columns.size(); ++i) {
        const std::string key = std::string("data.") + group + "[" + std::to_string(i) + "]";
        categoricals_.push_back(CategoricalColumnPlan{
            columns[i].name, source(columns[i].name, key, known, true),
            columns[i].embedding_dim});
      }
    };
    add_categoricals(data_.unknown_categoricals, "unknown_categoricals", false);
    add_categoricals(data_.known_categoricals, "known_categoricals", true);
    for (std::size_t i = 0; i < data_.static_reals.size(); ++i) {
      static_reals_.push_back(RealColumn{
          data_.static_reals[i],
          Source{header_column(data_.static_reals[i],
                            "data.static_reals[" + std::to_string(i) + "]"),
                 Derived::None}});
    }
    for (std::size_t i = 0; i < data_.static_categoricals.size(); ++i) {
      const CategoricalColumn& c = data_.static_categoricals[i];
      static_categoricals_.push_back(CategoricalColumnPlan{
          c.name,
          Source{header_column(c.name, "data.static_categoricals[" + std::to_string(i) + "]"),
                 Derived::None},
          c.embedding_dim});
    }
    for (const RealColumn& r : reals_) {
      if (r.source.derived != Derived::None) needs_calendar_ = r.name;
    }
    for (const CategoricalColumnPlan& c : categoricals_) {
      if (c.source.derived != Derived::None) needs_calendar_ = c.name;
    }

    // Interners: one per CSV categorical; calendar ones start with their fixed vocabulary.
    for (const CategoricalColumnPlan& c : categoricals_) {
      interners_.emplace_back(c.source.derived == Derived::None ? std::vector<std::string>{}
                                                                : derived_domain(c.source.derived));
    }
    for (std::size_t i = 0; i < static_categoricals_.size(); ++i) interners_.emplace_back();

    na_only_empty_ = data_.na_values.size() == 1 && data_.na_values[0].empty();
    na_none_ = data_.na_values.empty();
  }

  void add_real(const std::string& name, const Source& s) {
    reals_.push_back(RealColumn{name, s});
  }

  int header_column(const std::string& name, const std::string& key) const {
    const auto it = header_index_.find(name);
    if (it == header_index_.end()) {
      fail_column(source_.header_position(), name, "not in the header (named by " + key +
                               "; columns: " + join(source_.header()) + ")");
    }
    if (std::find(duplicated_.begin(), duplicated_.end(), name) != duplicated_.end()) {
      fail_column(source_.header_position(), name, "appears more than once in the header");
    }
    return it->second;
  }

  Source source(const std::string& name, const std::string& key, bool known,
                bool categorical) const {
    if (header_index_.count(name) != 0) return Source{header_column(name, key), Derived::None};
    const Derived d = derived_kind(name);
    if (d == Derived::None) header_column(name, key);  // throws: not in the header
    if (!known) {
      fail_column(source_.header_position(), name, "not in the header, and derived features (" +
                               join(derived_feature_names()) +
                               ") are known in advance: list it under data.known_reals or "
                               "data.known_categoricals (named by " +
                               key + ")");
    }
    if (d == Derived::RelativeTimeIdx && categorical) {
      fail_column(source_.header_position(), name, "relative_time_idx is a real; list it under data.known_reals");
    }
    return Source{-1, d};
  }

  // -------------------------------------------------------------------------------------
  // 2. Rows

  bool is_na_text(std::string_view v) const {
    if (na_only_empty_) return v.empty();
    if (na_none_) return false;
    for (const std::string& na : data_.na_values) {
      if (v == na) return true;
    }
    return false;
  }

  // A missing value: CSV text listed in data.na_values, a Parquet null or NaN. A Parquet
  // string is a value whatever it says.
  bool is_na(const Cell& c) const {
    switch (c.kind) {
      case Cell::Kind::Text:
        return is_na_text(c.text);
      case Cell::Kind::Null:
        return true;
      case Cell::Kind::Real:
        return std::isnan(c.real);
      default:
        return false;
    }
  }

  std::string missing_text(const Cell& c) const {
    if (c.kind == Cell::Kind::Null) return "null value";
    if (c.kind == Cell::Kind::Real) return "NaN value";
    return c.text.empty() ? std::string("empty value") : "missing value " + shown(c.text);
  }

  // A cell as messages show it.
  static std::string shown_cell(const Cell& c) {
    switch (c.kind) {
      case Cell::Kind::Text:
      case Cell::Kind::String:
        return shown(c.text);
      case Cell::Kind::Null:
        return "null";
      case Cell::Kind::Real:
        return shortest_double(c.real);
      case Cell::Kind::Integer:
        return std::to_string(c.integer);
      case Cell::Kind::Timestamp:
        return format_iso8601(c.integer, false);
      case Cell::Kind::Date:
        return format_iso8601(c.integer, true);
    }
    return {};
  }

  static const char* kind_noun(Cell::Kind kind) {
    switch (kind) {
      case Cell::Kind::Text:
        return "text";
      case Cell::Kind::String:
        return "string";
      case Cell::Kind::Null:
        return "null";
      case Cell::Kind::Real:
        return "floating-point number";
      case Cell::Kind::Integer:
        return "integer";
      case Cell::Kind::Timestamp:
        return "timestamp";
      case Cell::Kind::Date:
        return "date";
    }
    return "value";
  }

  // The text that names a category or a series: CSV text and Parquet strings as they are,
  // Parquet integers in decimal (as a CSV of the same data writes them, so both give the same
  // categories). Floats, times and dates cannot: their text would depend on formatting.
  std::string_view key_text(const Cell& c, std::size_t line, const std::string& column,
                            std::string& scratch) const {
    if (c.kind == Cell::Kind::Text || c.kind == Cell::Kind::String) return c.text;
    if (c.kind == Cell::Kind::Integer) {
      scratch = std::to_string(c.integer);
      return scratch;
    }
    fail_column(line, column,
                std::string("a ") + kind_noun(c.kind) + " (" + shown_cell(c) +
                    ") cannot name a category or a series; store the column as integers or "
                    "strings");
  }

  // The number in a real column's cell; it must be finite, and with `as_float32` (stored
  // reals; static reals are doubles) within float32's range.
  double number(const Cell& c, std::size_t line, const std::string& column,
                bool as_float32) const {
    double value = 0.0;
    switch (c.kind) {
      case Cell::Kind::Text: {
        const NumberResult result = parse_double(c.text, value);
        if (result == NumberResult::NotANumber) {
          fail_column(line, column, "not a number: " + shown(c.text));
        }
        if (result == NumberResult::NotFinite) value = std::numeric_limits<double>::infinity();
        break;
      }
      case Cell::Kind::Real:
        value = c.real;
        break;
      case Cell::Kind::Integer:
        // Exact below 2^53; stored reals are float32, which rounds a CSV's integers alike.
        value = static_cast<double>(c.integer);
        break;
      default:
        fail_column(line, column,
                    std::string("a ") + kind_noun(c.kind) + " (" + shown_cell(c) +
                        "), not a number; store the column as numbers");
    }
    if (!std::isfinite(value) ||
        (as_float32 && std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max()))) {
      fail_column(line, column,
                  std::string(as_float32 ? "not a finite float32 number: "
                                         : "not a finite number: ") +
                      shown_cell(c));
    }
    return value;
  }

  // The series of a row, created on first sight.
  std::uint32_t series_of(const std::vector<Cell>& cells, std::size_t line) {
    if (group_cols_.empty()) {
      if (states_.empty()) new_series({}, line);
      return 0;
    }
    auto group_value = [&](std::size_t g) {
      const Cell& c = cells[static_cast<std::size_t>(group_cols_[g])];
      if (is_na(c)) {
        fail_column(line, data_.group_columns[g],
                    missing_text(c) + " (a group column needs a value in every row)");
      }
      return key_text(c, line, data_.group_columns[g], group_scratch_[g]);
    };
    if (group_cols_.size() == 1) {
      const std::string_view v = group_value(0);
      if (have_last_key_ && v == std::string_view(last_key_)) return last_series_;
      last_key_.assign(v.data(), v.size());
    } else {
      key_scratch_.clear();
      for (std::size_t g = 0; g < group_cols_.size(); ++g) {
        const std::string_view v = group_value(g);
        if (g > 0) key_scratch_ += '\x1f';
        key_scratch_.append(v.data(), v.size());
      }
      if (have_last_key_ && key_scratch_ == last_key_) return last_series_;
      last_key_ = key_scratch_;
    }
    have_last_key_ = true;
    const auto it = series_index_.find(last_key_);
    if (it != series_index_.end()) {
      last_series_ = it->second;
    } else {
      std::vector<std::string> values;
      for (std::size_t g = 0; g < group_cols_.size(); ++g) values.emplace_back(group_value(g));
      last_series_ = new_series(std::move(values), line);
      series_index_.emplace(last_key_, last_series_);
    }
    return last_series_;
  }

  std::uint32_t new_series(std::vector<std::string> values, std::size_t line) {
    SeriesInfo info;
    if (values.empty()) {
      info.label = "(all rows)";
    } else if (values.size() == 1) {
      info.label = "'" + values[0] + "'";
    } else {
      for (std::size_t g = 0; g < values.size(); ++g) {
        if (g > 0) info.label += ", ";
        info.label += data_.group_columns[g] + "=" + values[g];
      }
    }
    info.group_values = std::move(values);
    info.first_line = line;
    ds_.series_.push_back(std::move(info));
    SeriesState state;
    state.last_reals.assign(reals_.size(), std::numeric_limits<float>::quiet_NaN());
    state.last_categoricals.assign(categoricals_.size(), -1);
    states_.push_back(std::move(state));
    if (ds_.series_.size() > std::numeric_limits<std::uint32_t>::max()) {
      fail(line, "too many series");
    }
    return static_cast<std::uint32_t>(ds_.series_.size() - 1);
  }

  // Settles the time column's kind on its first value. `integer` says whether the column
  // holds integers (a time index).
  void decide_time_kind(bool integer, TimeKind kind, std::size_t line) {
    time_decided_ = true;
    time_integer_ = integer;
    if (integer && data_.time_format == TimeFormat::Iso8601) {
      fail_column(line, data_.time_column,
                  "holds integers, but data.time_format is iso8601");
    }
    if (!integer && data_.time_format == TimeFormat::Integer) {
      fail_column(line, data_.time_column,
                  "holds dates or timestamps, but data.time_format is integer");
    }
    if (integer && !needs_calendar_.empty()) {
      fail_column(line, data_.time_column,
                  "holds integers, but the derived feature '" + needs_calendar_ +
                      "' needs ISO 8601 dates or date-times");
    }
    ds_.time_kind_ = kind;
  }

  std::int64_t parse_time(const Cell& c, std::size_t line, DateTimeFields& fields) {
    if (is_na(c)) {
      fail_column(line, data_.time_column,
                  missing_text(c) + " (the time column needs a value in every row)");
    }
    switch (c.kind) {
      case Cell::Kind::Text:
      case Cell::Kind::String:
        return parse_time_text(c.text, line, fields);
      case Cell::Kind::Integer:
        if (!time_decided_) decide_time_kind(true, TimeKind::Integer, line);
        return c.integer;
      case Cell::Kind::Timestamp:
        if (!time_decided_) decide_time_kind(false, TimeKind::DateTime, line);
        if (c.has_zone) ds_.times_have_zone_ = true;
        // Calendar features read the wall clock of the column's time zone, as for a CSV
        // time written with its offset. Only they need the fields (a sixth of the reading
        // time when computed for every row).
        if (!needs_calendar_.empty()) fields = fields_from_micros(c.local);
        return c.integer;
      case Cell::Kind::Date:
        if (!time_decided_) decide_time_kind(false, TimeKind::Date, line);
        if (!needs_calendar_.empty()) fields = fields_from_micros(c.integer);
        return c.integer;
      default:
        fail_column(line, data_.time_column,
                    std::string("a ") + kind_noun(c.kind) + " (" + shown_cell(c) +
                        ") cannot be a time; store integers, dates or timestamps");
    }
  }

  std::int64_t parse_time_text(std::string_view v, std::size_t line, DateTimeFields& fields) {
    if (!time_decided_) {
      const bool integer = data_.time_format == TimeFormat::Integer ||
                           (data_.time_format == TimeFormat::Auto && looks_like_integer(v));
      time_decided_ = true;
      time_integer_ = integer;
      if (integer && !needs_calendar_.empty()) {
        fail_column(line, data_.time_column,
                    "holds integers, but the derived feature '" + needs_calendar_ +
                        "' needs ISO 8601 dates or date-times");
      }
      ds_.time_kind_ = integer ? TimeKind::Integer : TimeKind::Date;
    }
    if (time_integer_) {
      std::int64_t t = 0;
      if (!parse_int64(v, t)) fail_column(line, data_.time_column, "not an integer: " + shown(v));
      return t;
    }
    std::string why;
    const std::optional<ParsedTime> parsed = parse_iso8601(trim(v), &why);
    if (!parsed) {
      fail_column(line, data_.time_column,
                  "not an ISO 8601 date or date-time: " + shown(v) + " (" + why + ")");
    }
    if (parsed->fields.has_time) ds_.time_kind_ = TimeKind::DateTime;
    if (parsed->fields.has_zone) ds_.times_have_zone_ = true;
    fields = parsed->fields;
    return parsed->micros;
  }

  // `hour` of a time column that holds dates only would be the constant 0: an input that
  // tells nothing, most likely a mistake about the column.
  void reject_time_of_day_on_dates() const {
    if (ds_.time_kind_ != TimeKind::Date) return;
    const auto named = [](const std::vector<std::string>& names) {
      return std::find(names.begin(), names.end(), "hour") != names.end();
    };
    const auto named_categorical = [](const std::vector<CategoricalColumn>& columns) {
      return std::any_of(columns.begin(), columns.end(),
                         [](const CategoricalColumn& c) { return c.name == "hour"; });
    };
    if (header_index_.count("hour") == 0 &&
        (named(data_.known_reals) || named(data_.unknown_reals) ||
         named_categorical(data_.known_categoricals) ||
         named_categorical(data_.unknown_categoricals))) {
      throw DataError(source_.name() + ": column '" + data_.time_column +
                      "' holds dates only, so the derived feature 'hour' would be 0 in every "
                      "row; remove it, or give the times of day");
    }
  }

  std::string time_text(std::int64_t t) const {
    if (time_integer_) return std::to_string(t);
    return format_iso8601(t, ds_.time_kind_ == TimeKind::Date);
  }

  // Tells the source which columns are read: time, groups and every named column.
  void select_columns() {
    std::vector<int> columns{time_col_};
    columns.insert(columns.end(), group_cols_.begin(), group_cols_.end());
    for (const RealColumn& r : reals_) {
      if (r.source.column >= 0) columns.push_back(r.source.column);
    }
    for (const CategoricalColumnPlan& c : categoricals_) {
      if (c.source.column >= 0) columns.push_back(c.source.column);
    }
    for (const RealColumn& r : static_reals_) columns.push_back(r.source.column);
    for (const CategoricalColumnPlan& c : static_categoricals_) columns.push_back(c.source.column);
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
    source_.select_columns(columns);
  }

  void read_rows() {
    const std::size_t n_reals = reals_.size();
    const std::size_t n_cats = categoricals_.size();
    const std::size_t n_sr = static_reals_.size();
    const std::size_t n_sc = static_categoricals_.size();
    ds_.reals_.assign(n_reals, {});
    ds_.categoricals_.assign(n_cats, {});
    std::vector<float> row_reals(n_reals);
    std::vector<std::int32_t> row_cats(n_cats);
    std::vector<double> row_sr(n_sr);
    std::vector<std::int32_t> row_sc(n_sc);
    std::string scratch;
    group_scratch_.assign(group_cols_.size(), std::string());
    select_columns();
    // Capacity for every row of the file: columns never regrow (and never copy) on big files.
    const std::size_t guess = source_.row_capacity();
    ds_.times_.reserve(guess);
    row_series_.reserve(guess);
    for (auto& c : ds_.reals_) c.reserve(guess);
    for (auto& c : ds_.categoricals_) c.reserve(guess);

    const MissingValuePolicy policy = data_.missing_values;
    std::vector<Cell> cells;
    std::size_t line = 0;
    std::uint32_t current = std::numeric_limits<std::uint32_t>::max();
    while (source_.next(cells, line)) {
      DateTimeFields fields;
      const std::int64_t t = parse_time(cells[static_cast<std::size_t>(time_col_)], line, fields);
      const std::uint32_t s = series_of(cells, line);
      SeriesState& st = states_[s];
      bool drop = false;

      for (std::size_t r = 0; r < n_reals && !drop; ++r) {
        const RealColumn& col = reals_[r];
        if (col.source.column < 0) {
          row_reals[r] = static_cast<float>(derived_value(col.source.derived, fields));
          continue;
        }
        const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
        if (is_na(v)) {
          if (policy == MissingValuePolicy::DropRow) {
            drop = true;
          } else if (policy == MissingValuePolicy::ForwardFill && !std::isnan(st.last_reals[r])) {
            row_reals[r] = st.last_reals[r];
            ++ds_.filled_values_;
          } else {
            missing(line, col.name, v, s, policy);
          }
          continue;
        }
        row_reals[r] = static_cast<float>(number(v, line, col.name, /*as_float32=*/true));
        if (col.name == data_.target &&
            !in_transformation_domain(target_normalizer_.transformation, row_reals[r])) {
          fail_column(line, col.name,
                      "value " + shortest_double(row_reals[r]) +
                          " is outside the domain of data.target_normalizer.transformation '" +
                          to_string(target_normalizer_.transformation) + "' (values must be " +
                          transformation_domain(target_normalizer_.transformation) + ")");
        }
      }
      for (std::size_t c = 0; c < n_cats && !drop; ++c) {
        const CategoricalColumnPlan& col = categoricals_[c];
        if (col.source.column < 0) {
          row_cats[c] = derived_value(col.source.derived, fields) - derived_low(col.source.derived);
          continue;
        }
        const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
        if (is_na(v)) {
          if (policy == MissingValuePolicy::DropRow) {
            drop = true;
          } else if (policy == MissingValuePolicy::ForwardFill && st.last_categoricals[c] >= 0) {
            row_cats[c] = st.last_categoricals[c];
            ++ds_.filled_values_;
          } else {
            missing(line, col.name, v, s, policy);
          }
          continue;
        }
        row_cats[c] = interners_[c].intern(key_text(v, line, col.name, scratch));
      }
      for (std::size_t i = 0; i < n_sr && !drop; ++i) {
        const RealColumn& col = static_reals_[i];
        const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
        if (is_na(v)) {
          if (policy == MissingValuePolicy::DropRow) {
            drop = true;
          } else if (policy == MissingValuePolicy::ForwardFill && st.static_set) {
            row_sr[i] = st.static_reals[i];
            ++ds_.filled_values_;
          } else {
            missing(line, col.name, v, s, policy);
          }
          continue;
        }
        row_sr[i] = number(v, line, col.name, /*as_float32=*/false);
      }
      for (std::size_t i = 0; i < n_sc && !drop; ++i) {
        const CategoricalColumnPlan& col = static_categoricals_[i];
        const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
        if (is_na(v)) {
          if (policy == MissingValuePolicy::DropRow) {
            drop = true;
          } else if (policy == MissingValuePolicy::ForwardFill && st.static_set) {
            row_sc[i] = st.static_categoricals[i];
            ++ds_.filled_values_;
          } else {
            missing(line, col.name, v, s, policy);
          }
          continue;
        }
        row_sc[i] = interners_[n_cats + i].intern(key_text(v, line, col.name, scratch));
      }
      if (drop) {
        ++ds_.dropped_rows_;
        continue;
      }

      // Order within the series.
      if (st.rows > 0 && t <= st.last_time) {
        // Without group columns a time that repeats or restarts is most often the next series.
        const std::string hint =
            group_cols_.empty() ? "; if the file holds several series, name the columns that "
                                  "tell them apart in data.group_columns"
                                : "";
        if (t == st.last_time) {
          fail_column(line, data_.time_column,
                      "duplicate time " + time_text(t) + " in series " +
                          ds_.series_[s].label + " (also at " +
                          source_.position_text(st.last_line) + ")" + hint);
        }
        fail_column(line, data_.time_column,
                    "time " + time_text(t) + " is before " + time_text(st.last_time) +
                        " of the previous row of series " + ds_.series_[s].label + " (" +
                        source_.position_text(st.last_line) +
                        "); rows of a series must be in increasing time order" + hint);
      }
      // Static columns: constant within the series.
      if (!st.static_set) {
        st.static_reals = row_sr;
        st.static_categoricals = row_sc;
        st.static_set = true;
        st.static_line = line;
      } else {
        for (std::size_t i = 0; i < n_sr; ++i) {
          if (row_sr[i] != st.static_reals[i]) {
            fail_column(line, static_reals_[i].name,
                        "static value " +
                            shown_cell(cells[static_cast<std::size_t>(
                                static_reals_[i].source.column)]) +
                            " differs from the series' value at " +
                            source_.position_text(st.static_line) + " (series " +
                            ds_.series_[s].label + "); a static column must be constant "
                            "within a series");
          }
        }
        for (std::size_t i = 0; i < n_sc; ++i) {
          if (row_sc[i] != st.static_categoricals[i]) {
            const std::vector<std::string>& values = interners_[n_cats + i].values();
            fail_column(line, static_categoricals_[i].name,
                        "static value " + shown(values[static_cast<std::size_t>(row_sc[i])]) +
                            " differs from " +
                            shown(values[static_cast<std::size_t>(st.static_categoricals[i])]) +
                            " at " + source_.position_text(st.static_line) + " (series " +
                            ds_.series_[s].label + "); a static column must be constant "
                            "within a series");
          }
        }
      }

      if (s != current) {
        if (st.rows > 0) interleaved_ = true;
        current = s;
      }
      ++st.rows;
      st.last_time = t;
      st.last_line = line;
      if (policy == MissingValuePolicy::ForwardFill) {
        st.last_reals = row_reals;
        st.last_categoricals = row_cats;
      }
      row_series_.push_back(s);
      ds_.times_.push_back(t);
      for (std::size_t r = 0; r < n_reals; ++r) ds_.reals_[r].push_back(row_reals[r]);
      for (std::size_t c = 0; c < n_cats; ++c) ds_.categoricals_[c].push_back(row_cats[c]);
    }
    if (ds_.times_.empty()) {
      fail(source_.header_position(),
           ds_.dropped_rows_ > 0
               ? "no data rows left after dropping " + std::to_string(ds_.dropped_rows_) +
                     " rows with missing values"
               : std::string("no data rows after the header"));
    }
    remove_series_without_rows();
  }

  // A series is created when its first row is seen, before that row may be dropped
  // (missing_values: drop_row). One whose every row was dropped has no rows and no static
  // values; group_rows would read those past the end of an empty vector (found by
  // fuzz_csv_dataset). A dropped row counts as not in the file, so neither is its series.
  void remove_series_without_rows() {
    std::vector<std::uint32_t> new_index(states_.size());
    std::size_t kept = 0;
    for (std::size_t s = 0; s < states_.size(); ++s) {
      new_index[s] = static_cast<std::uint32_t>(kept);
      if (states_[s].rows == 0) continue;
      if (kept != s) {
        states_[kept] = std::move(states_[s]);
        ds_.series_[kept] = std::move(ds_.series_[s]);
      }
      ++kept;
    }
    if (kept == states_.size()) return;
    states_.resize(kept);
    ds_.series_.resize(kept);
    for (std::uint32_t& s : row_series_) s = new_index[s];
  }

  [[noreturn]] void missing(std::size_t line, const std::string& column, const Cell& v,
                            std::uint32_t series, MissingValuePolicy policy) const {
    if (policy == MissingValuePolicy::ForwardFill) {
      fail_column(line, column,
                  missing_text(v) + " in the first row of series " + ds_.series_[series].label +
                      ", with no earlier value to carry forward (data.missing_values: "
                      "forward_fill)");
    }
    fail_column(line, column, missing_text(v) + " (data.missing_values: error)");
  }

  // -------------------------------------------------------------------------------------
  // 3. Series-contiguous storage

  void group_rows() {
    std::int64_t offset = 0;
    for (std::size_t s = 0; s < ds_.series_.size(); ++s) {
      ds_.series_[s].offset = offset;
      ds_.series_[s].length = states_[s].rows;
      offset += states_[s].rows;
    }
    if (interleaved_) {
      // Stable counting sort by series (series in order of first appearance).
      std::vector<std::size_t> next(ds_.series_.size());
      for (std::size_t s = 0; s < next.size(); ++s) {
        next[s] = static_cast<std::size_t>(ds_.series_[s].offset);
      }
      std::vector<std::size_t> order(row_series_.size());
      for (std::size_t row = 0; row < row_series_.size(); ++row) {
        order[next[row_series_[row]]++] = row;
      }
      permute(ds_.times_, order);
      for (auto& c : ds_.reals_) permute(c, order);
      for (auto& c : ds_.categoricals_) permute(c, order);
    }
    std::vector<std::uint32_t>().swap(row_series_);
    for (auto& c : ds_.reals_) c.shrink_to_fit();
    for (auto& c : ds_.categoricals_) c.shrink_to_fit();
    ds_.times_.shrink_to_fit();

    // Static values per series.
    const std::size_t n_series = ds_.series_.size();
    ds_.static_reals_.resize(n_series * static_reals_.size());
    static_raw_.resize(n_series * static_categoricals_.size());
    for (std::size_t s = 0; s < n_series; ++s) {
      for (std::size_t i = 0; i < static_reals_.size(); ++i) {
        ds_.static_reals_[s * static_reals_.size() + i] = states_[s].static_reals[i];
      }
      for (std::size_t i = 0; i < static_categoricals_.size(); ++i) {
        static_raw_[s * static_categoricals_.size() + i] = states_[s].static_categoricals[i];
      }
    }
  }

  // -------------------------------------------------------------------------------------
  // 4. Split

  void split() {
    const WindowConfig& w = config_.windows;
    const std::int64_t span = w.encoder_length + w.prediction_length;
    for (SeriesInfo& s : ds_.series_) {
      if (s.length < span) {
        fail(s.first_line, "series " + s.label + ": " + std::to_string(s.length) +
                               " rows, shorter than one window (windows.encoder_length " +
                               std::to_string(w.encoder_length) +
                               " + windows.prediction_length " +
                               std::to_string(w.prediction_length) + " = " +
                               std::to_string(span) + " rows)");
      }
      const std::int64_t v = validation_rows(s.length, config_.split);
      s.train_rows = s.length - v;
      if (s.train_rows < 1) {
        fail(s.first_line, "series " + s.label + ": split.validation_steps " +
                               std::to_string(v) + " leaves no training rows (the series has " +
                               std::to_string(s.length) + " rows)");
      }
    }
  }

  // -------------------------------------------------------------------------------------
  // 5. Encoders and scalers

  CategoricalEncoder encoder_for(const CategoricalColumnPlan& col, const Interner& interner,
                                 const std::vector<char>& used) const {
    if (fitted_ != nullptr) {
      const auto it = fitted_->encoders.find(col.name);
      if (it == fitted_->encoders.end()) {
        throw DataError(source_.name() + ": column '" + col.name +
                        "': the fitted transforms have no encoder for it");
      }
      return it->second;
    }
    if (col.source.derived != Derived::None) return CategoricalEncoder(derived_domain(col.source.derived));
    std::vector<std::string> seen;
    for (std::size_t id = 0; id < used.size(); ++id) {
      if (used[id]) seen.push_back(interner.values()[id]);
    }
    return CategoricalEncoder::fit(seen);
  }

  void encode_categoricals() {
    const std::size_t n_cats = categoricals_.size();
    for (std::size_t c = 0; c < n_cats; ++c) {
      const Interner& interner = interners_[c];
      std::vector<std::int32_t>& column = ds_.categoricals_[c];
      // Values that occur in some series' training part.
      std::vector<char> used(interner.values().size(), 0);
      for (const SeriesInfo& s : ds_.series_) {
        for (std::int64_t r = 0; r < s.train_rows; ++r) {
          used[static_cast<std::size_t>(column[static_cast<std::size_t>(s.offset + r)])] = 1;
        }
      }
      const CategoricalEncoder encoder = encoder_for(categoricals_[c], interner, used);
      std::vector<std::int32_t> code(interner.values().size());
      for (std::size_t id = 0; id < code.size(); ++id) {
        code[id] = static_cast<std::int32_t>(encoder.encode(interner.values()[id]));
      }
      for (std::int32_t& v : column) v = code[static_cast<std::size_t>(v)];
      ds_.transforms_.encoders[categoricals_[c].name] = encoder;
      ds_.categorical_names_.push_back(categoricals_[c].name);
    }
    const std::size_t n_sc = static_categoricals_.size();
    ds_.static_categoricals_.resize(static_raw_.size());
    for (std::size_t i = 0; i < n_sc; ++i) {
      const Interner& interner = interners_[n_cats + i];
      const std::vector<char> used(interner.values().size(), 1);  // every series' value
      const CategoricalEncoder encoder = encoder_for(static_categoricals_[i], interner, used);
      for (std::size_t s = 0; s < ds_.series_.size(); ++s) {
        const std::int32_t raw = static_raw_[s * n_sc + i];
        ds_.static_categoricals_[s * n_sc + i] =
            encoder.encode(interner.values()[static_cast<std::size_t>(raw)]);
      }
      ds_.transforms_.encoders[static_categoricals_[i].name] = encoder;
    }
  }

  // The target's place among the stored reals.
  std::size_t target_real_index() const {
    for (std::size_t r = 0; r < reals_.size(); ++r) {
      if (reals_[r].name == data_.target) return r;
    }
    throw DataError("dataset: the target '" + data_.target + "' is not a stored column");
  }

  void fit_scalers() {
    const std::size_t n_reals = reals_.size();
    const std::size_t n_series = ds_.series_.size();
    for (const RealColumn& r : reals_) ds_.real_names_.push_back(r.name);
    std::vector<std::string> static_names;
    for (const RealColumn& r : static_reals_) static_names.push_back(r.name);

    ds_.transforms_.target_normalizer = target_normalizer_;
    if (fitted_ != nullptr) {
      ds_.transforms_.scaler = fitted_->scaler;
      ds_.transforms_.static_scaler = fitted_->static_scaler;
    } else {
      const ScalingMode mode = data_.scaling;
      std::vector<ScalerStats> stats;
      std::vector<std::vector<std::string>> groups;
      // The target's statistics are of its transformed values, by the normaliser's method.
      const auto target_stats = [&](const std::vector<const SeriesInfo*>& parts) {
        std::vector<double> values;
        const std::vector<float>& column = ds_.reals_[target_real_index()];
        for (const SeriesInfo* info : parts) {
          for (std::int64_t i = 0; i < info->train_rows; ++i) {
            values.push_back(transform_target(
                target_normalizer_.transformation,
                column[static_cast<std::size_t>(info->offset + i)]));
          }
        }
        ScalerStats st =
            fit_center_and_scale(target_normalizer_.method, values.data(), values.size());
        if (st.scale == 0.0) st.scale = 1.0;  // constant: as compute_stats
        return st;
      };
      const std::size_t target = target_real_index();
      if (mode == ScalingMode::PerSeries) {
        for (std::size_t s = 0; s < n_series; ++s) {
          const SeriesInfo& info = ds_.series_[s];
          groups.push_back(info.group_values);
          for (std::size_t r = 0; r < n_reals; ++r) {
            stats.push_back(r == target ? target_stats({&info})
                                        : compute_stats(ds_.reals_[r].data() + info.offset,
                                                        static_cast<std::size_t>(info.train_rows)));
          }
        }
      } else if (mode == ScalingMode::Global) {
        std::vector<const SeriesInfo*> all;
        for (const SeriesInfo& info : ds_.series_) all.push_back(&info);
        std::vector<float> buffer;
        for (std::size_t r = 0; r < n_reals; ++r) {
          if (r == target) {
            stats.push_back(target_stats(all));
            continue;
          }
          buffer.clear();
          for (const SeriesInfo& info : ds_.series_) {
            const float* begin = ds_.reals_[r].data() + info.offset;
            buffer.insert(buffer.end(), begin, begin + info.train_rows);
          }
          stats.push_back(compute_stats(buffer.data(), buffer.size()));
        }
      }
      ds_.transforms_.scaler =
          StandardScaler(mode, ds_.real_names_, std::move(groups), std::move(stats));

      std::vector<ScalerStats> static_stats;
      const ScalingMode static_mode =
          mode == ScalingMode::None ? ScalingMode::None : ScalingMode::Global;
      if (static_mode == ScalingMode::Global) {
        std::vector<double> values(n_series);
        for (std::size_t i = 0; i < static_reals_.size(); ++i) {
          for (std::size_t s = 0; s < n_series; ++s) {
            values[s] = ds_.static_reals_[s * static_reals_.size() + i];
          }
          static_stats.push_back(compute_stats(values.data(), values.size()));
        }
      }
      ds_.transforms_.static_scaler =
          StandardScaler(static_mode, static_names, {}, std::move(static_stats));
    }

    // Where each column and series finds its statistics.
    const StandardScaler& scaler = ds_.transforms_.scaler;
    for (const std::string& name : ds_.real_names_) {
      const std::optional<std::size_t> c = scaler.column_index(name);
      if (!c && scaler.mode() != ScalingMode::None) {
        throw DataError(source_.name() + ": column '" + name +
                        "': the fitted scaler has no statistics for it");
      }
      ds_.scaler_column_.push_back(c.value_or(0));
    }
    for (const std::string& name : static_names) {
      const StandardScaler& st = ds_.transforms_.static_scaler;
      const std::optional<std::size_t> c = st.column_index(name);
      if (!c && st.mode() != ScalingMode::None) {
        throw DataError(source_.name() + ": column '" + name +
                        "': the fitted static scaler has no statistics for it");
      }
      ds_.static_scaler_column_.push_back(c.value_or(0));
    }
    for (const SeriesInfo& info : ds_.series_) {
      const std::optional<std::size_t> row = scaler.find_group(info.group_values);
      if (!row && scaler.mode() == ScalingMode::PerSeries) {
        fail(info.first_line, "series " + info.label +
                                  ": not known to the fitted scaler (per_series scaling "
                                  "needs statistics for every series)");
      }
      ds_.scaler_row_.push_back(row.value_or(0));
    }
  }

  // -------------------------------------------------------------------------------------
  // 6. Schema, gather plans, windows

  int real_index(const std::string& name) const {
    for (std::size_t r = 0; r < reals_.size(); ++r) {
      if (reals_[r].name == name) return static_cast<int>(r);
    }
    return TimeSeriesDataset::kRelativeTimeIdx;  // relative_time_idx is not stored
  }

  int categorical_index(const std::string& name) const {
    for (std::size_t c = 0; c < categoricals_.size(); ++c) {
      if (categoricals_[c].name == name) return static_cast<int>(c);
    }
    return 0;
  }

  void make_schema_and_plans() {
    InputSchema& schema = ds_.schema_;
    schema.target = data_.target;
    schema.static_reals = data_.static_reals;
    schema.known_reals = data_.known_reals;
    schema.unknown_reals = data_.unknown_reals;
    auto variables = [&](const std::vector<CategoricalColumn>& columns) {
      std::vector<CategoricalVariable> out;
      for (const CategoricalColumn& c : columns) {
        out.push_back(CategoricalVariable{
            c.name, ds_.transforms_.encoders.at(c.name).cardinality(), c.embedding_dim});
      }
      return out;
    };
    schema.static_categoricals = variables(data_.static_categoricals);
    schema.known_categoricals = variables(data_.known_categoricals);
    schema.unknown_categoricals = variables(data_.unknown_categoricals);

    for (const std::string& name : data_.unknown_reals) {
      ds_.encoder_real_plan_.push_back(real_index(name));
    }
    for (const std::string& name : data_.known_reals) {
      ds_.encoder_real_plan_.push_back(real_index(name));
      ds_.decoder_real_plan_.push_back(real_index(name));
    }
    ds_.target_index_ = real_index(data_.target);
    ds_.encoder_real_plan_.push_back(ds_.target_index_);
    for (const CategoricalColumn& c : data_.unknown_categoricals) {
      ds_.encoder_categorical_plan_.push_back(categorical_index(c.name));
    }
    for (const CategoricalColumn& c : data_.known_categoricals) {
      ds_.encoder_categorical_plan_.push_back(categorical_index(c.name));
      ds_.decoder_categorical_plan_.push_back(categorical_index(c.name));
    }
    BatchWidths& w = ds_.widths_;
    w.static_reals = static_cast<std::int64_t>(data_.static_reals.size());
    w.static_categoricals = static_cast<std::int64_t>(data_.static_categoricals.size());
    w.encoder_reals = static_cast<std::int64_t>(ds_.encoder_real_plan_.size());
    w.encoder_categoricals = static_cast<std::int64_t>(ds_.encoder_categorical_plan_.size());
    w.decoder_reals = static_cast<std::int64_t>(ds_.decoder_real_plan_.size());
    w.decoder_categoricals = static_cast<std::int64_t>(ds_.decoder_categorical_plan_.size());
  }

  void make_windows() {
    for (std::size_t s = 0; s < ds_.series_.size(); ++s) {
      const SeriesInfo& info = ds_.series_[s];
      if (info.length > std::numeric_limits<std::uint32_t>::max()) {
        fail(info.first_line, "series " + info.label + ": more than 2^32 rows");
      }
      append_series_windows(static_cast<std::uint32_t>(s), info.length, info.train_rows,
                            config_.windows, ds_.training_windows_, ds_.validation_windows_);
    }
    const WindowConfig& w = config_.windows;
    if (ds_.training_windows_.empty()) {
      fail(source_.header_position(), "no training windows: the training part of every series is shorter than one "
              "window (windows.encoder_length " + std::to_string(w.encoder_length) +
              " + windows.prediction_length " + std::to_string(w.prediction_length) +
              "); shorten the windows or the validation part (split)");
    }
    const bool wants_validation =
        (config_.split.validation_steps && *config_.split.validation_steps > 0) ||
        (config_.split.validation_fraction && *config_.split.validation_fraction > 0.0);
    if (wants_validation && ds_.validation_windows_.empty()) {
      fail(source_.header_position(), "no validation windows: no series has a validation part of at least "
              "windows.prediction_length (" + std::to_string(w.prediction_length) +
              ") rows; enlarge split.validation_fraction or split.validation_steps, or set it "
              "to 0 for no validation");
    }
    ds_.training_windows_.shrink_to_fit();
    ds_.validation_windows_.shrink_to_fit();
  }

  RowSource& source_;
  const TrainConfig& config_;
  const DataConfig& data_;
  const DataTransforms* fitted_;
  // The saved model's normaliser when loading with fitted transforms, else the config's.
  TargetNormalizerConfig target_normalizer_;
  TimeSeriesDataset ds_;

  std::unordered_map<std::string, int> header_index_;
  std::vector<std::string> duplicated_;
  int time_col_ = 0;
  std::vector<int> group_cols_;
  std::vector<RealColumn> reals_;                       // stored time-varying reals
  std::vector<CategoricalColumnPlan> categoricals_;     // time-varying categoricals
  std::vector<RealColumn> static_reals_;
  std::vector<CategoricalColumnPlan> static_categoricals_;
  std::vector<Interner> interners_;  // categoricals_, then static_categoricals_
  std::string needs_calendar_;       // a calendar feature in use, if any
  bool na_only_empty_ = true;
  bool na_none_ = false;

  bool time_decided_ = false;
  bool time_integer_ = true;
  std::unordered_map<std::string, std::uint32_t> series_index_;
  std::string last_key_;
  std::string key_scratch_;
  std::vector<std::string> group_scratch_;  // one per group column (key_text)
  bool have_last_key_ = false;
  std::uint32_t last_series_ = 0;
  std::vector<SeriesState> states_;
  std::vector<std::uint32_t> row_series_;
  std::vector<std::int32_t> static_raw_;
  bool interleaved_ = false;
};

// ---------------------------------------------------------------------------------------
// TimeSeriesDataset

TimeSeriesDataset TimeSeriesDataset::load(const TrainConfig& config) {
  const std::unique_ptr<RowSource> source = open_data_file(config.data);
  return from_source(*source, config, nullptr);
}

TimeSeriesDataset TimeSeriesDataset::load(const TrainConfig& config,
                                          const DataTransforms& fitted) {
  const std::unique_ptr<RowSource> source = open_data_file(config.data);
  return from_source(*source, config, &fitted);
}

TimeSeriesDataset TimeSeriesDataset::from_reader(CsvReader reader, const TrainConfig& config,
                                                 const DataTransforms* fitted) {
  CsvRowSource source(std::move(reader));
  return from_source(source, config, fitted);
}

TimeSeriesDataset TimeSeriesDataset::from_source(RowSource& source, const TrainConfig& config,
                                                 const DataTransforms* fitted) {
  config.validate();
  DatasetBuilder builder(source, config, fitted);
  return builder.build();
}

std::string TimeSeriesDataset::format_time(std::int64_t value) const {
  if (time_kind_ == TimeKind::Integer) return std::to_string(value);
  return format_iso8601(value, time_kind_ == TimeKind::Date, times_have_zone_);
}

const std::vector<float>& TimeSeriesDataset::real_column(const std::string& name) const {
  for (std::size_t r = 0; r < real_names_.size(); ++r) {
    if (real_names_[r] == name) return reals_[r];
  }
  throw DataError("no stored real column '" + name + "' (stored: " + join(real_names_) + ")");
}

const std::vector<std::int32_t>& TimeSeriesDataset::categorical_column(
    const std::string& name) const {
  for (std::size_t c = 0; c < categorical_names_.size(); ++c) {
    if (categorical_names_[c] == name) return categoricals_[c];
  }
  throw DataError("no time-varying categorical column '" + name + "' (stored: " +
                  join(categorical_names_) + ")");
}

std::map<std::string, std::int64_t> TimeSeriesDataset::unknown_category_counts() const {
  std::map<std::string, std::int64_t> counts;
  for (std::size_t c = 0; c < categorical_names_.size(); ++c) {
    const auto n = std::count(categoricals_[c].begin(), categoricals_[c].end(), 0);
    if (n > 0) counts[categorical_names_[c]] = n;
  }
  const std::size_t n_static = schema_.static_categoricals.size();
  for (std::size_t i = 0; i < n_static; ++i) {
    std::int64_t n = 0;
    for (std::size_t s = 0; s < series_.size(); ++s) n += static_categoricals_[s * n_static + i] == 0;
    if (n > 0) counts[schema_.static_categoricals[i].name] = n;
  }
  return counts;
}

ScalerStats TimeSeriesDataset::target_stats(std::size_t series) const {
  const std::size_t column = scaler_column_[static_cast<std::size_t>(target_index_)];
  return transforms_.scaler.stats(scaler_row_[series], column);
}

ScalerStats TimeSeriesDataset::target_normalization(std::size_t series,
                                                   std::int64_t encoder_start) const {
  const ScalerStats fitted = target_stats(series);
  const TargetNormalizerConfig& normalizer = transforms_.target_normalizer;
  if (normalizer.scope == TargetScope::Series) return fitted;
  const std::vector<float>& column = reals_[static_cast<std::size_t>(target_index_)];
  const auto first = static_cast<std::size_t>(series_[series].offset + encoder_start);
  std::vector<double> values(static_cast<std::size_t>(encoder_length_));
  for (std::size_t t = 0; t < values.size(); ++t) {
    values[t] = transform_target(normalizer.transformation, column[first + t]);
  }
  const double last = values.back();  // before robust's fit sorts the values
  ScalerStats window = fit_center_and_scale(normalizer.method, values.data(), values.size());
  if (normalizer.center == TargetCenter::Last) window.mean = last;
  window.scale = std::max(window.scale, encoder_scale_floor(fitted));
  if (!(window.scale > 1e-12 * std::max(1.0, std::fabs(window.mean)))) window.scale = 1.0;
  return window;
}

double TimeSeriesDataset::normalize_target(double y, const ScalerStats& stats) const {
  return (transform_target(transforms_.target_normalizer.transformation, y) - stats.mean) /
         stats.scale;
}

double TimeSeriesDataset::denormalize_target(double z, const ScalerStats& stats) const {
  return inverse_transform_target(transforms_.target_normalizer.transformation,
                                  z * stats.scale + stats.mean);
}

void TimeSeriesDataset::fill_sample(const Window& window, const SampleBuffers& out) const {
  const std::size_t s = window.series;
  const SeriesInfo& info = series_[s];
  const std::size_t base = static_cast<std::size_t>(info.offset) + window.start;
  const auto enc = static_cast<std::size_t>(encoder_length_);
  const auto dec = static_cast<std::size_t>(prediction_length_);
  const double inv_enc = 1.0 / static_cast<double>(encoder_length_);

  // Statistics of every stored real for this series.
  std::vector<ScalerStats> stats(reals_.size());
  for (std::size_t r = 0; r < reals_.size(); ++r) {
    stats[r] = transforms_.scaler.stats(scaler_row_[s], scaler_column_[r]);
  }
  const ScalerStats target = target_normalization(s, window.start);
  if (out.target_center != nullptr) *out.target_center = target.mean;
  if (out.target_scale != nullptr) *out.target_scale = target.scale;
  auto scaled = [&](int r, std::size_t row) {
    if (r == target_index_) {
      return static_cast<float>(
          normalize_target(reals_[static_cast<std::size_t>(r)][row], target));
    }
    const ScalerStats& st = stats[static_cast<std::size_t>(r)];
    return static_cast<float>((static_cast<double>(reals_[static_cast<std::size_t>(r)][row]) -
                               st.mean) /
                              st.scale);
  };

  const std::size_t n_sr = static_scaler_column_.size();
  for (std::size_t i = 0; i < n_sr; ++i) {
    out.static_reals[i] = static_cast<float>(
        transforms_.static_scaler.transform(static_reals_[s * n_sr + i], 0, static_scaler_column_[i]));
  }
  const std::size_t n_sc = static_cast<std::size_t>(widths_.static_categoricals);
  for (std::size_t i = 0; i < n_sc; ++i) {
    out.static_categoricals[i] = static_categoricals_[s * n_sc + i];
  }

  const std::size_t n_er = encoder_real_plan_.size();
  const std::size_t n_ec = encoder_categorical_plan_.size();
  for (std::size_t t = 0; t < enc; ++t) {
    const std::size_t row = base + t;
    for (std::size_t j = 0; j < n_er; ++j) {
      const int r = encoder_real_plan_[j];
      out.encoder_reals[t * n_er + j] =
          r == kRelativeTimeIdx
              ? static_cast<float>((static_cast<double>(t) - static_cast<double>(enc)) * inv_enc)
              : scaled(r, row);
    }
    for (std::size_t j = 0; j < n_ec; ++j) {
      out.encoder_categoricals[t * n_ec + j] =
          categoricals_[static_cast<std::size_t>(encoder_categorical_plan_[j])][row];
    }
  }
  const std::size_t n_dr = decoder_real_plan_.size();
  const std::size_t n_dc = decoder_categorical_plan_.size();
  for (std::size_t t = 0; t < dec; ++t) {
    const std::size_t row = base + enc + t;
    for (std::size_t j = 0; j < n_dr; ++j) {
      const int r = decoder_real_plan_[j];
      out.decoder_reals[t * n_dr + j] =
          r == kRelativeTimeIdx ? static_cast<float>(static_cast<double>(t) * inv_enc)
                                : scaled(r, row);
    }
    for (std::size_t j = 0; j < n_dc; ++j) {
      out.decoder_categoricals[t * n_dc + j] =
          categoricals_[static_cast<std::size_t>(decoder_categorical_plan_[j])][row];
    }
    if (out.targets != nullptr) out.targets[t] = scaled(target_index_, row);
    if (out.decoder_times != nullptr) out.decoder_times[t] = times_[row];
  }
}

std::size_t TimeSeriesDataset::storage_bytes() const {
  std::size_t bytes = times_.capacity() * sizeof(std::int64_t);
  for (const auto& c : reals_) bytes += c.capacity() * sizeof(float);
  for (const auto& c : categoricals_) bytes += c.capacity() * sizeof(std::int32_t);
  bytes += static_reals_.capacity() * sizeof(double);
  bytes += static_categoricals_.capacity() * sizeof(std::int64_t);
  bytes += (training_windows_.capacity() + validation_windows_.capacity()) * sizeof(Window);
  bytes += series_.capacity() * sizeof(SeriesInfo);
  for (const SeriesInfo& s : series_) {
    bytes += s.label.capacity();
    for (const std::string& v : s.group_values) bytes += v.capacity();
  }
  return bytes;
}

std::size_t TimeSeriesDataset::materialized_window_bytes() const {
  const BatchWidths& w = widths_;
  const auto enc = static_cast<std::size_t>(encoder_length_);
  const auto dec = static_cast<std::size_t>(prediction_length_);
  // float32 reals and targets, int64 codes and times: the dtypes of the batch tensors.
  const std::size_t per_window =
      static_cast<std::size_t>(w.static_reals) * 4 +
      static_cast<std::size_t>(w.static_categoricals) * 8 +
      enc * (static_cast<std::size_t>(w.encoder_reals) * 4 +
             static_cast<std::size_t>(w.encoder_categoricals) * 8) +
      dec * (static_cast<std::size_t>(w.decoder_reals) * 4 +
             static_cast<std::size_t>(w.decoder_categoricals) * 8 + 4 + 8);
  return per_window * (training_windows_.size() + validation_windows_.size());
}

}  // namespace tft
