// Fuzz target: CSV text through the tokenizer and the dataset builder
// (TimeSeriesDataset::from_reader), with a small fixed schema: series by `g`, time `t`,
// target `y`, a static real `z`, a static categorical (`g` itself), a known real `x`, a known
// categorical `c`, an unknown real `u`, the derived relative_time_idx, and day_of_week where
// the time is read as ISO 8601.
//
// The first input byte picks the data options (27 variants: missing-value policy x scaling x
// time format); the rest is the CSV text. Every loaded dataset's windows are gathered
// (fill_sample: the indexing of every column), its transforms go through their JSON, and the
// same text is loaded again with the fitted transforms (the path a saved model takes).
//
// Contract checked, besides the sanitizers: any text either loads or is rejected with a
// tft::DataError; transforms read back equal from their JSON; the text loads again with its
// own fitted transforms into the same series, windows and transforms.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"
#include "data/time_series_dataset.h"
#include "data/window_sampler.h"
#include "fuzz_support.h"
#include "readers/csv_reader.h"

namespace {

using tft::TimeSeriesDataset;
using tft::TrainConfig;

// Windows gathered per list: enough to reach every series' start and end on small inputs.
constexpr std::size_t kMaxWindowsGathered = 64;

// The fixed part of the config; config_for sets the data options the first byte picks.
constexpr const char* kConfigYaml = R"(
data:
  path: fuzz.csv
  time_column: t
  group_columns: [g]
  target: y
  static_reals: [z]
  static_categoricals: [g]
  known_reals: [x, relative_time_idx]
  known_categoricals: [{name: c, embedding_dim: 2}]
  unknown_reals: [u]
  na_values: ["", NA]
windows: {encoder_length: 2, prediction_length: 1}
split: {validation_steps: 1}
)";

TrainConfig config_for(std::uint8_t options) {
  static const TrainConfig fixed = tft::load_train_config_string(kConfigYaml);
  TrainConfig c = fixed;
  c.data.missing_values = static_cast<tft::MissingValuePolicy>(options % 3);
  c.data.scaling = static_cast<tft::ScalingMode>(options / 3 % 3);
  c.data.time_format = static_cast<tft::TimeFormat>(options / 9 % 3);
  if (c.data.time_format == tft::TimeFormat::Iso8601) {
    c.data.known_categoricals.push_back({"day_of_week", 0});
  }
  c.validate();  // a broken fixture is the harness's bug: it throws out of the harness
  return c;
}

TimeSeriesDataset load(const std::string& csv, const TrainConfig& config,
                       const tft::DataTransforms* fitted) {
  return TimeSeriesDataset::from_reader(tft::CsvReader(config.data.path, csv), config, fitted);
}

// Buffers of one sample at the dataset's widths (time_series_dataset.h, SampleBuffers).
struct Sample {
  std::vector<float> static_reals, encoder_reals, decoder_reals, targets;
  std::vector<std::int64_t> static_categoricals, encoder_categoricals, decoder_categoricals,
      decoder_times;

  explicit Sample(const TimeSeriesDataset& d)
      : static_reals(d.widths().static_reals),
        encoder_reals(d.encoder_length() * d.widths().encoder_reals),
        decoder_reals(d.prediction_length() * d.widths().decoder_reals),
        targets(d.prediction_length()),
        static_categoricals(d.widths().static_categoricals),
        encoder_categoricals(d.encoder_length() * d.widths().encoder_categoricals),
        decoder_categoricals(d.prediction_length() * d.widths().decoder_categoricals),
        decoder_times(d.prediction_length()) {}

  tft::SampleBuffers buffers() {
    return {static_reals.data(),  static_categoricals.data(),
            encoder_reals.data(), encoder_categoricals.data(),
            decoder_reals.data(), decoder_categoricals.data(),
            targets.data(),       decoder_times.data()};
  }
};

void gather_windows(const TimeSeriesDataset& dataset, const std::vector<tft::Window>& windows) {
  Sample sample(dataset);
  for (std::size_t i = 0; i < windows.size() && i < kMaxWindowsGathered; ++i) {
    dataset.fill_sample(windows[i], sample.buffers());
  }
}

void expect_transforms_read_back(const tft::DataTransforms& transforms) {
  const nlohmann::json json = transforms.to_json();
  tft::DataTransforms again;
  try {
    again = tft::DataTransforms::from_json(json);
  } catch (const tft::Error& e) {
    tft::fuzz::broken_contract("fitted transforms do not read back from their JSON: " +
                               std::string(e.what()) + "\n" + json.dump());
  }
  if (!(again == transforms)) {
    tft::fuzz::broken_contract("fitted transforms read back from their JSON differ:\n" +
                               json.dump());
  }
}

void expect_same_load_with_fitted(const std::string& csv, const TrainConfig& config,
                                  const TimeSeriesDataset& first) {
  try {
    const TimeSeriesDataset again = load(csv, config, &first.transforms());
    if (again.series().size() != first.series().size() ||
        again.training_windows() != first.training_windows() ||
        again.validation_windows() != first.validation_windows() ||
        !(again.transforms() == first.transforms())) {
      tft::fuzz::broken_contract("the data loads differently with the transforms fitted on it");
    }
  } catch (const tft::Error& e) {
    tft::fuzz::broken_contract("the data does not load with the transforms fitted on it: " +
                               std::string(e.what()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const TrainConfig config = config_for(data[0]);
  const std::string csv = tft::fuzz::as_text(data + 1, size - 1);
  try {
    const TimeSeriesDataset dataset = load(csv, config, nullptr);
    gather_windows(dataset, dataset.training_windows());
    gather_windows(dataset, dataset.validation_windows());
    if (!dataset.times().empty()) {
      dataset.format_time(dataset.times().front());
      dataset.format_time(dataset.times().back());
    }
    expect_transforms_read_back(dataset.transforms());
    expect_same_load_with_fitted(csv, config, dataset);
  } catch (const tft::DataError&) {
    return 0;  // rejected with a message: the builder's job
  }
  return 0;
}
