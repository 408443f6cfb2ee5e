#include "data/row_reader.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "common/format.h"
#include "data/target_normalizer.h"
#include "readers/cell_values.h"
#include "readers/load_errors.h"
#include "readers/time_column.h"

namespace tft {

namespace {

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
  std::vector<std::string> take_values() { return std::move(values_); }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
  std::vector<std::string> values_;
  std::string last_;
  std::int32_t last_id_ = -1;
};

// What reading remembers per series while rows stream in.
struct SeriesState {
  std::int64_t rows = 0;
  std::int64_t last_time = 0;
  std::size_t last_line = 0;
  bool static_set = false;
  std::size_t static_line = 0;
  std::vector<float> last_reals;                // forward fill; NaN: none yet
  std::vector<std::int32_t> last_categoricals;  // forward fill; -1: none yet
  std::vector<double> static_reals;
  std::vector<std::int32_t> static_categoricals;  // ids
};

class RowReader {
 public:
  RowReader(RowSource& source, const ColumnPlan& plan, const DataConfig& data,
            const TargetNormalizerConfig& target_normalizer)
      : source_(source),
        plan_(plan),
        data_(data),
        transformation_(target_normalizer.transformation),
        policy_(data.missing_values),
        cells_(source, data.na_values),
        time_(source, cells_, data, plan.needs_calendar),
        row_reals_(plan.reals.size()),
        row_cats_(plan.categoricals.size()),
        row_sr_(plan.static_reals.size()),
        row_sc_(plan.static_categoricals.size()),
        group_scratch_(plan.groups.size()) {
    // One interner per categorical; calendar ones start with their fixed vocabulary.
    for (const PlannedCategorical& c : plan.categoricals) {
      interners_.emplace_back(c.source.derived == DerivedFeature::None
                                  ? std::vector<std::string>{}
                                  : calendar_domain(c.source.derived));
    }
    for (std::size_t i = 0; i < plan.static_categoricals.size(); ++i) interners_.emplace_back();
  }

  LoadedRows read();

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    fail_at(source_, line, what);
  }
  [[noreturn]] void fail_in(std::size_t line, const std::string& column,
                            const std::string& what) const {
    fail_column(source_, line, column, what);
  }

  void reserve();
  std::uint32_t series_of(const std::vector<Cell>& cells, std::size_t line);
  std::uint32_t new_series(std::vector<std::string> values, std::size_t line);
  template <typename Fill>
  bool on_missing(const Cell& v, std::size_t line, const std::string& column, std::uint32_t s,
                  bool can_fill, Fill fill);
  [[noreturn]] void missing(std::size_t line, const std::string& column, const Cell& v,
                            std::uint32_t series) const;
  bool read_reals(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s,
                  const DateTimeFields& fields);
  bool read_categoricals(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s,
                         const DateTimeFields& fields);
  bool read_statics(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s);
  void check_order(std::size_t line, std::uint32_t s, std::int64_t t) const;
  void check_statics(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s);
  void append(std::size_t line, std::uint32_t s, std::int64_t t);
  void remove_series_without_rows();
  void finish();

  RowSource& source_;
  const ColumnPlan& plan_;
  const DataConfig& data_;
  const TargetTransformation transformation_;
  const MissingValuePolicy policy_;
  CellReader cells_;
  TimeColumnReader time_;
  LoadedRows out_;

  std::vector<Interner> interners_;  // plan_.categoricals, then plan_.static_categoricals
  std::vector<SeriesState> states_;
  std::uint32_t current_ = std::numeric_limits<std::uint32_t>::max();
  // The row being read.
  std::vector<float> row_reals_;
  std::vector<std::int32_t> row_cats_;
  std::vector<double> row_sr_;
  std::vector<std::int32_t> row_sc_;
  std::string scratch_;
  // Series lookup.
  std::unordered_map<std::string, std::uint32_t> series_index_;
  std::string last_key_;
  std::string key_scratch_;
  std::vector<std::string> group_scratch_;  // one per group column (key_text)
  bool have_last_key_ = false;
  std::uint32_t last_series_ = 0;
};

LoadedRows RowReader::read() {
  out_.reals.assign(plan_.reals.size(), {});
  out_.categoricals.assign(plan_.categoricals.size(), {});
  source_.select_columns(plan_.read_columns());
  reserve();
  std::vector<Cell> cells;
  std::size_t line = 0;
  while (source_.next(cells, line)) {
    DateTimeFields fields;
    const std::int64_t t = time_.read(cells[static_cast<std::size_t>(plan_.time)], line, fields);
    const std::uint32_t s = series_of(cells, line);
    const bool drop = read_reals(cells, line, s, fields) ||
                      read_categoricals(cells, line, s, fields) || read_statics(cells, line, s);
    if (drop) {
      ++out_.dropped_rows;
      continue;
    }
    check_order(line, s, t);
    check_statics(cells, line, s);
    append(line, s, t);
  }
  if (out_.times.empty()) {
    fail(source_.header_position(),
         out_.dropped_rows > 0 ? "no data rows left after dropping " +
                                     std::to_string(out_.dropped_rows) + " rows with missing values"
                               : std::string("no data rows after the header"));
  }
  remove_series_without_rows();
  time_.reject_time_of_day_on_dates(plan_.header_has_hour);
  finish();
  return std::move(out_);
}

// Capacity for every row of the file: columns never regrow (and never copy) on big files.
void RowReader::reserve() {
  const std::size_t guess = source_.row_capacity();
  out_.times.reserve(guess);
  out_.row_series.reserve(guess);
  for (auto& c : out_.reals) c.reserve(guess);
  for (auto& c : out_.categoricals) c.reserve(guess);
}

// The series of a row, created on first sight.
std::uint32_t RowReader::series_of(const std::vector<Cell>& cells, std::size_t line) {
  const std::vector<int>& groups = plan_.groups;
  if (groups.empty()) {
    if (states_.empty()) new_series({}, line);
    return 0;
  }
  auto group_value = [&](std::size_t g) {
    const Cell& c = cells[static_cast<std::size_t>(groups[g])];
    if (cells_.is_na(c)) {
      fail_in(line, data_.group_columns[g],
              cells_.missing_text(c) + " (a group column needs a value in every row)");
    }
    return cells_.key_text(c, line, data_.group_columns[g], group_scratch_[g]);
  };
  if (groups.size() == 1) {
    const std::string_view v = group_value(0);
    if (have_last_key_ && v == std::string_view(last_key_)) return last_series_;
    last_key_.assign(v.data(), v.size());
  } else {
    key_scratch_.clear();
    for (std::size_t g = 0; g < groups.size(); ++g) {
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
    for (std::size_t g = 0; g < groups.size(); ++g) values.emplace_back(group_value(g));
    last_series_ = new_series(std::move(values), line);
    series_index_.emplace(last_key_, last_series_);
  }
  return last_series_;
}

std::uint32_t RowReader::new_series(std::vector<std::string> values, std::size_t line) {
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
  out_.series.push_back(std::move(info));
  SeriesState state;
  state.last_reals.assign(plan_.reals.size(), std::numeric_limits<float>::quiet_NaN());
  state.last_categoricals.assign(plan_.categoricals.size(), -1);
  states_.push_back(std::move(state));
  if (out_.series.size() > std::numeric_limits<std::uint32_t>::max()) {
    fail(line, "too many series");
  }
  return static_cast<std::uint32_t>(out_.series.size() - 1);
}

// A missing value by data.missing_values: true to drop the row (drop_row); `fill` it from the
// series' previous row when `can_fill` (forward_fill); else an error.
template <typename Fill>
bool RowReader::on_missing(const Cell& v, std::size_t line, const std::string& column,
                           std::uint32_t s, bool can_fill, Fill fill) {
  if (policy_ == MissingValuePolicy::DropRow) return true;
  if (policy_ == MissingValuePolicy::ForwardFill && can_fill) {
    fill();
    ++out_.filled_values;
    return false;
  }
  missing(line, column, v, s);
}

void RowReader::missing(std::size_t line, const std::string& column, const Cell& v,
                        std::uint32_t series) const {
  if (policy_ == MissingValuePolicy::ForwardFill) {
    fail_in(line, column,
            cells_.missing_text(v) + " in the first row of series " + out_.series[series].label +
                ", with no earlier value to carry forward (data.missing_values: "
                "forward_fill)");
  }
  fail_in(line, column, cells_.missing_text(v) + " (data.missing_values: error)");
}

// The stored reals of a row into row_reals_; true when the row is dropped.
bool RowReader::read_reals(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s,
                           const DateTimeFields& fields) {
  const SeriesState& st = states_[s];
  for (std::size_t r = 0; r < plan_.reals.size(); ++r) {
    const PlannedReal& col = plan_.reals[r];
    if (col.source.column < 0) {
      row_reals_[r] = static_cast<float>(calendar_value(col.source.derived, fields));
      continue;
    }
    const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
    if (cells_.is_na(v)) {
      if (on_missing(v, line, col.name, s, !std::isnan(st.last_reals[r]),
                     [&] { row_reals_[r] = st.last_reals[r]; })) {
        return true;
      }
      continue;
    }
    row_reals_[r] = static_cast<float>(cells_.number(v, line, col.name, /*as_float32=*/true));
    if (col.name == data_.target && !in_transformation_domain(transformation_, row_reals_[r])) {
      fail_in(line, col.name,
              "value " + shortest_double(row_reals_[r]) +
                  " is outside the domain of data.target_normalizer.transformation '" +
                  to_string(transformation_) + "' (values must be " +
                  transformation_domain(transformation_) + ")");
    }
  }
  return false;
}

// The time-varying categoricals of a row (ids) into row_cats_; true when the row is dropped.
bool RowReader::read_categoricals(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s,
                                  const DateTimeFields& fields) {
  const SeriesState& st = states_[s];
  for (std::size_t c = 0; c < plan_.categoricals.size(); ++c) {
    const PlannedCategorical& col = plan_.categoricals[c];
    if (col.source.column < 0) {
      row_cats_[c] = calendar_value(col.source.derived, fields) - calendar_low(col.source.derived);
      continue;
    }
    const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
    if (cells_.is_na(v)) {
      if (on_missing(v, line, col.name, s, st.last_categoricals[c] >= 0,
                     [&] { row_cats_[c] = st.last_categoricals[c]; })) {
        return true;
      }
      continue;
    }
    row_cats_[c] = interners_[c].intern(cells_.key_text(v, line, col.name, scratch_));
  }
  return false;
}

// The static columns of a row into row_sr_ and row_sc_; true when the row is dropped.
bool RowReader::read_statics(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s) {
  const SeriesState& st = states_[s];
  for (std::size_t i = 0; i < plan_.static_reals.size(); ++i) {
    const PlannedReal& col = plan_.static_reals[i];
    const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
    if (cells_.is_na(v)) {
      if (on_missing(v, line, col.name, s, st.static_set,
                     [&] { row_sr_[i] = st.static_reals[i]; })) {
        return true;
      }
      continue;
    }
    row_sr_[i] = cells_.number(v, line, col.name, /*as_float32=*/false);
  }
  const std::size_t n_cats = plan_.categoricals.size();
  for (std::size_t i = 0; i < plan_.static_categoricals.size(); ++i) {
    const PlannedCategorical& col = plan_.static_categoricals[i];
    const Cell& v = cells[static_cast<std::size_t>(col.source.column)];
    if (cells_.is_na(v)) {
      if (on_missing(v, line, col.name, s, st.static_set,
                     [&] { row_sc_[i] = st.static_categoricals[i]; })) {
        return true;
      }
      continue;
    }
    row_sc_[i] = interners_[n_cats + i].intern(cells_.key_text(v, line, col.name, scratch_));
  }
  return false;
}

// Rows of a series must be in strictly increasing time order.
void RowReader::check_order(std::size_t line, std::uint32_t s, std::int64_t t) const {
  const SeriesState& st = states_[s];
  if (st.rows == 0 || t > st.last_time) return;
  // Without group columns a time that repeats or restarts is most often the next series.
  const std::string hint = plan_.groups.empty()
                               ? "; if the file holds several series, name the columns that "
                                 "tell them apart in data.group_columns"
                               : "";
  const std::string& label = out_.series[s].label;
  if (t == st.last_time) {
    fail_in(line, data_.time_column,
            "duplicate time " + time_.text(t) + " in series " + label + " (also at " +
                source_.position_text(st.last_line) + ")" + hint);
  }
  fail_in(line, data_.time_column,
          "time " + time_.text(t) + " is before " + time_.text(st.last_time) +
              " of the previous row of series " + label + " (" +
              source_.position_text(st.last_line) +
              "); rows of a series must be in increasing time order" + hint);
}

// Static columns: set by a series' first row, constant within the series.
void RowReader::check_statics(const std::vector<Cell>& cells, std::size_t line, std::uint32_t s) {
  SeriesState& st = states_[s];
  if (!st.static_set) {
    st.static_reals = row_sr_;
    st.static_categoricals = row_sc_;
    st.static_set = true;
    st.static_line = line;
    return;
  }
  const std::string where = " at " + source_.position_text(st.static_line) + " (series " +
                            out_.series[s].label +
                            "); a static column must be constant within a series";
  for (std::size_t i = 0; i < row_sr_.size(); ++i) {
    if (row_sr_[i] != st.static_reals[i]) {
      const PlannedReal& col = plan_.static_reals[i];
      fail_in(line, col.name,
              "static value " + shown_cell(cells[static_cast<std::size_t>(col.source.column)]) +
                  " differs from the series' value" + where);
    }
  }
  const std::size_t n_cats = plan_.categoricals.size();
  for (std::size_t i = 0; i < row_sc_.size(); ++i) {
    if (row_sc_[i] != st.static_categoricals[i]) {
      const std::vector<std::string>& values = interners_[n_cats + i].values();
      fail_in(line, plan_.static_categoricals[i].name,
              "static value " + show_string(values[static_cast<std::size_t>(row_sc_[i])]) +
                  " differs from " +
                  show_string(values[static_cast<std::size_t>(st.static_categoricals[i])]) + where);
    }
  }
}

void RowReader::append(std::size_t line, std::uint32_t s, std::int64_t t) {
  SeriesState& st = states_[s];
  if (s != current_) {
    if (st.rows > 0) out_.interleaved = true;
    current_ = s;
  }
  ++st.rows;
  st.last_time = t;
  st.last_line = line;
  if (policy_ == MissingValuePolicy::ForwardFill) {
    st.last_reals = row_reals_;
    st.last_categoricals = row_cats_;
  }
  out_.row_series.push_back(s);
  out_.times.push_back(t);
  for (std::size_t r = 0; r < row_reals_.size(); ++r) out_.reals[r].push_back(row_reals_[r]);
  for (std::size_t c = 0; c < row_cats_.size(); ++c) {
    out_.categoricals[c].push_back(row_cats_[c]);
  }
}

// A series is created when its first row is seen, before that row may be dropped
// (missing_values: drop_row). One whose every row was dropped has no rows and no static
// values; storing it would read those past the end of an empty vector (found by
// fuzz_csv_dataset). A dropped row counts as not in the file, so neither is its series.
void RowReader::remove_series_without_rows() {
  std::vector<std::uint32_t> new_index(states_.size());
  std::size_t kept = 0;
  for (std::size_t s = 0; s < states_.size(); ++s) {
    new_index[s] = static_cast<std::uint32_t>(kept);
    if (states_[s].rows == 0) continue;
    if (kept != s) {
      states_[kept] = std::move(states_[s]);
      out_.series[kept] = std::move(out_.series[s]);
    }
    ++kept;
  }
  if (kept == states_.size()) return;
  states_.resize(kept);
  out_.series.resize(kept);
  for (std::uint32_t& s : out_.row_series) s = new_index[s];
}

// Per series: its length and static values; the time column's kind; the category values.
void RowReader::finish() {
  const std::size_t n_sr = plan_.static_reals.size();
  const std::size_t n_sc = plan_.static_categoricals.size();
  out_.static_reals.resize(out_.series.size() * n_sr);
  out_.static_ids.resize(out_.series.size() * n_sc);
  for (std::size_t s = 0; s < out_.series.size(); ++s) {
    out_.series[s].length = states_[s].rows;
    for (std::size_t i = 0; i < n_sr; ++i) {
      out_.static_reals[s * n_sr + i] = states_[s].static_reals[i];
    }
    for (std::size_t i = 0; i < n_sc; ++i) {
      out_.static_ids[s * n_sc + i] = states_[s].static_categoricals[i];
    }
  }
  out_.time_kind = time_.kind();
  out_.times_have_zone = time_.has_zone();
  for (Interner& interner : interners_) out_.category_values.push_back(interner.take_values());
}

}  // namespace

LoadedRows read_rows(RowSource& source, const ColumnPlan& plan, const DataConfig& data,
                     const TargetNormalizerConfig& target_normalizer) {
  return RowReader(source, plan, data, target_normalizer).read();
}

}  // namespace tft
