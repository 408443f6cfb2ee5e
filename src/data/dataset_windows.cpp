// DatasetBuilder's windowing steps: the time split of each series (window_sampler.h), the
// model's input schema and the gather plans fill_sample follows, and the window lists.
#include <limits>

#include "data/dataset_builder.h"

namespace tft {

namespace {

// The place of a stored real among `reals`; kRelativeTimeIdx for relative_time_idx, which is
// not stored.
int real_index(const std::vector<PlannedReal>& reals, const std::string& name, int not_stored) {
  for (std::size_t r = 0; r < reals.size(); ++r) {
    if (reals[r].name == name) return static_cast<int>(r);
  }
  return not_stored;
}

int categorical_index(const std::vector<PlannedCategorical>& categoricals,
                      const std::string& name) {
  for (std::size_t c = 0; c < categoricals.size(); ++c) {
    if (categoricals[c].name == name) return static_cast<int>(c);
  }
  return 0;
}

}  // namespace

void DatasetBuilder::split() {
  const WindowConfig& w = config_.windows;
  const std::int64_t span = w.encoder_length + w.prediction_length;
  for (SeriesInfo& s : ds_.series_) {
    if (s.length < span) {
      fail(s.first_line, "series " + s.label + ": " + std::to_string(s.length) +
                             " rows, shorter than one window (windows.encoder_length " +
                             std::to_string(w.encoder_length) + " + windows.prediction_length " +
                             std::to_string(w.prediction_length) + " = " + std::to_string(span) +
                             " rows)");
    }
    const std::int64_t v = validation_rows(s.length, config_.split);
    s.train_rows = s.length - v;
    if (s.train_rows < 1) {
      fail(s.first_line, "series " + s.label + ": split.validation_steps " + std::to_string(v) +
                             " leaves no training rows (the series has " +
                             std::to_string(s.length) + " rows)");
    }
  }
}

void DatasetBuilder::make_schema() {
  InputSchema& schema = ds_.schema_;
  schema.target = data_.target;
  schema.static_reals = data_.static_reals;
  schema.known_reals = data_.known_reals;
  schema.unknown_reals = data_.unknown_reals;
  auto variables = [&](const std::vector<CategoricalColumn>& columns) {
    std::vector<CategoricalVariable> out;
    for (const CategoricalColumn& c : columns) {
      out.push_back(CategoricalVariable{c.name, ds_.transforms_.encoders.at(c.name).cardinality(),
                                        c.embedding_dim});
    }
    return out;
  };
  schema.static_categoricals = variables(data_.static_categoricals);
  schema.known_categoricals = variables(data_.known_categoricals);
  schema.unknown_categoricals = variables(data_.unknown_categoricals);
}

// Which stored column each input of a sample is gathered from, and the widths that gives.
void DatasetBuilder::make_sample_plans() {
  const auto real = [&](const std::string& name) {
    return real_index(plan_.reals, name, TimeSeriesDataset::kRelativeTimeIdx);
  };
  const auto categorical = [&](const std::string& name) {
    return categorical_index(plan_.categoricals, name);
  };
  for (const std::string& name : data_.unknown_reals) {
    ds_.encoder_real_plan_.push_back(real(name));
  }
  for (const std::string& name : data_.known_reals) {
    ds_.encoder_real_plan_.push_back(real(name));
    ds_.decoder_real_plan_.push_back(real(name));
  }
  ds_.target_index_ = real(data_.target);
  ds_.encoder_real_plan_.push_back(ds_.target_index_);
  for (const CategoricalColumn& c : data_.unknown_categoricals) {
    ds_.encoder_categorical_plan_.push_back(categorical(c.name));
  }
  for (const CategoricalColumn& c : data_.known_categoricals) {
    ds_.encoder_categorical_plan_.push_back(categorical(c.name));
    ds_.decoder_categorical_plan_.push_back(categorical(c.name));
  }
  BatchWidths& w = ds_.widths_;
  w.static_reals = static_cast<std::int64_t>(data_.static_reals.size());
  w.static_categoricals = static_cast<std::int64_t>(data_.static_categoricals.size());
  w.encoder_reals = static_cast<std::int64_t>(ds_.encoder_real_plan_.size());
  w.encoder_categoricals = static_cast<std::int64_t>(ds_.encoder_categorical_plan_.size());
  w.decoder_reals = static_cast<std::int64_t>(ds_.decoder_real_plan_.size());
  w.decoder_categoricals = static_cast<std::int64_t>(ds_.decoder_categorical_plan_.size());
}

void DatasetBuilder::make_windows() {
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
    fail(source_.header_position(),
         "no training windows: the training part of every series is shorter than one "
         "window (windows.encoder_length " +
             std::to_string(w.encoder_length) + " + windows.prediction_length " +
             std::to_string(w.prediction_length) +
             "); shorten the windows or the validation part (split)");
  }
  const bool wants_validation =
      (config_.split.validation_steps && *config_.split.validation_steps > 0) ||
      (config_.split.validation_fraction && *config_.split.validation_fraction > 0.0);
  if (wants_validation && ds_.validation_windows_.empty()) {
    fail(source_.header_position(),
         "no validation windows: no series has a validation part of at least "
         "windows.prediction_length (" +
             std::to_string(w.prediction_length) +
             ") rows; enlarge split.validation_fraction or split.validation_steps, or set "
             "it to 0 for no validation");
  }
  ds_.training_windows_.shrink_to_fit();
  ds_.validation_windows_.shrink_to_fit();
}

}  // namespace tft
