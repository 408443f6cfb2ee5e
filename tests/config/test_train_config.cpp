// TrainConfig: YAML reading with file/line/key messages, round trips, validation, relative
// paths, and get/set by dotted key.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;

namespace {

// A full config touching every section and most keys.
const char* kFull = R"(# a comment
data:
  path: data/sales.csv
  format: csv
  delimiter: ";"
  time_column: date
  time_format: iso8601
  group_columns: [store, item]
  target: sales
  static_reals: [store_size]
  static_categoricals: [store, {name: region, embedding_dim: 3}]
  known_reals: [price, relative_time_idx]
  known_categoricals: [promo, day_of_week, {name: month, embedding_dim: 4}]
  unknown_reals: [footfall]
  unknown_categoricals: [weather]
  missing_values: forward_fill
  na_values: ["", NA, "n/a"]
  scaling: global
  target_normalizer: {scope: series, center: statistic, method: robust, transformation: log1p}
windows:
  encoder_length: 30
  prediction_length: 7
  stride: 2
split:
  validation_steps: 60
model:
  hidden_size: 32
  attention_heads: 4
  dropout: 0.2
  lstm_layers: 2
  decoder_layers: 2
  quantiles: [0.1, 0.5, 0.9]
  unit_chunks: {lstm_encoder: 4, attention_1: 2}
training:
  epochs: 15
  batch_size: 128
  learning_rate: 0.003
  gradient_clip_norm: 0.5
  lr_schedule:
    kind: reduce_on_plateau
    factor: 0.3
    patience: 2
    min_lr: 1.0e-5
  early_stopping_patience: 5
  seed: 12345678901234
  threads: 2
  device: cuda:1
  distributed: {backend: gloo, timeout_seconds: 30}
  qat: {enabled: true, start_epoch: 2, weight_bits: 6, activation_bits: 7,
        freeze_observers_epoch: 4}
checkpoint:
  strategy: selective
  layers: [lstm_encoder, attention_1]
  checkpoint_ffn: false
output:
  directory: runs/sales
)";

const char* kMinimal = R"(data:
  path: sales.csv
  time_column: date
  target: sales
windows:
  encoder_length: 24
  prediction_length: 6
)";

std::string temp_dir() {
  static std::string dir;
  if (dir.empty()) {
    char templ[] = "/tmp/tft_config_test_XXXXXX";
    const char* made = mkdtemp(templ);
    assert_non_null(made);
    dir = made;
  }
  return dir;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

// Minimal text with one line replaced or appended, for error cases.
std::string with_line(const std::string& extra) { return std::string(kMinimal) + extra; }

}  // namespace

TFT_TEST(test_defaults) {
  const tft::TrainConfig c;
  assert_int_equal(c.training.epochs, 20);
  assert_int_equal(c.training.batch_size, 64);
  assert_true(c.split.validation_fraction.has_value());
  assert_false(c.split.validation_steps.has_value());
  assert_int_equal(c.model.hidden_size, tft::ModelConfig().hidden_size);
  assert_true(c.checkpoint == tft::CheckpointConfig::none());
  assert_string_equal(c.output.directory.c_str(), "output");
  // Required fields are empty by default: validate names the first.
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError, "data.path: required");
}

TFT_TEST(test_minimal_loads_with_defaults_and_resolved_paths) {
  const tft::TrainConfig c = tft::load_train_config_string(kMinimal, "/base/dir");
  assert_string_equal(c.data.path.c_str(), "/base/dir/sales.csv");
  assert_string_equal(c.output.directory.c_str(), "/base/dir/output");
  assert_string_equal(c.base_dir.c_str(), "/base/dir");
  assert_int_equal(c.windows.encoder_length, 24);
  assert_int_equal(c.windows.stride, 1);
  assert_true(c.data.missing_values == tft::MissingValuePolicy::Error);
  assert_true(c.data.time_format == tft::TimeFormat::Auto);
  // Without a base folder relative paths stay relative.
  const tft::TrainConfig rel = tft::load_train_config_string(kMinimal);
  assert_string_equal(rel.data.path.c_str(), "sales.csv");
}

TFT_TEST(test_full_config_values) {
  const tft::TrainConfig c = tft::load_train_config_string(kFull, "/srv/tft");
  assert_string_equal(c.data.path.c_str(), "/srv/tft/data/sales.csv");
  assert_int_equal(c.data.delimiter, ';');
  assert_true(c.data.time_format == tft::TimeFormat::Iso8601);
  assert_int_equal(c.data.group_columns.size(), 2);
  assert_int_equal(c.data.static_categoricals.size(), 2);
  assert_string_equal(c.data.static_categoricals[1].name.c_str(), "region");
  assert_int_equal(c.data.static_categoricals[1].embedding_dim, 3);
  assert_int_equal(c.data.static_categoricals[0].embedding_dim, 0);
  assert_true(c.data.missing_values == tft::MissingValuePolicy::ForwardFill);
  assert_int_equal(c.data.na_values.size(), 3);
  assert_true(c.data.scaling == tft::ScalingMode::Global);
  assert_true(c.data.target_normalizer.scope == tft::TargetScope::Series);
  assert_true(c.data.target_normalizer.center == tft::TargetCenter::Statistic);
  assert_true(c.data.target_normalizer.method == tft::TargetMethod::Robust);
  assert_true(c.data.target_normalizer.transformation == tft::TargetTransformation::Log1p);
  assert_false(c.split.validation_fraction.has_value());
  assert_int_equal(*c.split.validation_steps, 60);
  assert_int_equal(c.model.unit_chunks.at("attention_1"), 2);
  assert_true(c.training.lr_schedule.min_lr == 1e-5);
  assert_true(c.training.seed == 12345678901234ULL);
  assert_string_equal(c.training.device.c_str(), "cuda:1");
  assert_true(c.training.qat.enabled);
  assert_int_equal(c.training.qat.start_epoch, 2);
  assert_int_equal(c.training.qat.weight_bits, 6);
  assert_int_equal(c.training.qat.activation_bits, 7);
  assert_int_equal(c.training.qat.freeze_observers_epoch, 4);
  // Unit names in the checkpoint section resolve with the model's units (2 decoder layers).
  const auto* selective = std::get_if<tft::SelectiveStrategy>(&c.checkpoint.strategy);
  assert_non_null(selective);
  assert_int_equal(selective->layers.size(), 2);
  assert_int_equal(selective->layers[0], 3);  // lstm_encoder
  assert_int_equal(selective->layers[1], 6);  // attention_1
  assert_false(c.checkpoint.checkpoint_ffn);
  assert_string_equal(c.output.directory.c_str(), "/srv/tft/runs/sales");

  const tft::ModelConfig m = tft::make_model_config(c, tft::InputSchema{});
  assert_int_equal(m.hidden_size, 32);
  assert_int_equal(m.encoder_length, 30);
  assert_int_equal(m.prediction_length, 7);
  assert_int_equal(m.decoder_layers, 2);
  // The model is built with fake quantizers of the configured widths.
  assert_true(m.quantization.enabled);
  assert_int_equal(m.quantization.weight_bits, 6);
  assert_int_equal(m.quantization.activation_bits, 7);
}

TFT_TEST(test_round_trip) {
  for (const char* text : {kFull, kMinimal}) {
    const tft::TrainConfig c = tft::load_train_config_string(text, "/srv/tft");
    const std::string yaml = tft::train_config_to_yaml(c);
    const tft::TrainConfig back = tft::load_train_config_string(yaml, c.base_dir);
    if (back != c) fail_msg("round trip differs:\n%s", yaml.c_str());
    assert_string_equal(tft::train_config_to_yaml(back).c_str(), yaml.c_str());
  }
  // Awkward values survive: strings that look like numbers, tabs, quotes, tiny floats.
  tft::TrainConfig c = tft::load_train_config_string(kMinimal, "/x");
  c.data.delimiter = '\t';
  c.data.na_values = {"", "NA", "123", "true", "a \"q\"", "-"};
  c.data.group_columns = {"id: 1", "#x", "a:b", "c:", "[d]", "e,f"};
  c.training.learning_rate = 0.1 + 0.2;
  c.training.lr_schedule.min_lr = 1e-300;
  c.model.quantiles = {0.05, 0.5, 0.95};
  c.validate();
  const tft::TrainConfig back = tft::load_train_config_string(tft::train_config_to_yaml(c), "/x");
  if (back != c) fail_msg("awkward round trip differs:\n%s", tft::train_config_to_yaml(c).c_str());
}

TFT_TEST(test_unknown_key_names_file_and_line) {
  const std::string path = write_file("unknown.yaml", with_line("training:\n  epoch: 5\n"));
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_file(path), tft::ConfigError,
                         (path + ":9: training: unknown key 'epoch' (expected one of: epochs, "
                                 "batch_size").c_str());
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_string(with_line("trainig:\n  epochs: 5\n")),
                         tft::ConfigError,
                         "line 8: config: unknown key 'trainig' (expected one of: data, windows");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string(with_line("training:\n  lr_schedule:\n    factr: 0.1\n")),
      tft::ConfigError, "line 10: training.lr_schedule: unknown key 'factr'");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string(with_line("  stride: 1\n  stride: 2\n")),
      tft::ConfigError, "line 9: windows: duplicate key 'stride'");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string(
          "data:\n  path: a.csv\n  time_column: t\n  target: y\n"
          "  known_categoricals: [{name: promo, dim: 2}]\n"
          "windows: {encoder_length: 2, prediction_length: 1}\n"),
      tft::ConfigError, "line 5: data.known_categoricals[0]: unknown key 'dim'");
}

TFT_TEST(test_wrong_types_name_key_type_and_value) {
  const std::string path = write_file("sp500.yaml", with_line("training:\n  epochs: ten\n"));
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_file(path), tft::ConfigError,
                         (path + ":9: training.epochs: expected a positive integer, got \"ten\"")
                             .c_str());
  struct Case {
    const char* extra;
    const char* message;
  };
  const Case cases[] = {
      {"training:\n  epochs: \"10\"\n",
       "line 9: training.epochs: expected a positive integer, got \"10\""},
      {"training:\n  epochs: 0\n", "line 9: training.epochs: expected a positive integer, got 0"},
      {"training:\n  epochs: -3\n",
       "line 9: training.epochs: expected a positive integer, got -3"},
      {"training:\n  epochs: 2.5\n",
       "line 9: training.epochs: expected a positive integer, got 2.5"},
      {"training:\n  epochs: 99999999999999999999\n",
       "line 9: training.epochs: integer 99999999999999999999 is too large"},
      {"training:\n  epochs: -99999999999999999999\n",
       "line 9: training.epochs: expected a positive integer, got -99999999999999999999"},
      {"training:\n  learning_rate: fast\n",
       "line 9: training.learning_rate: expected a number, got \"fast\""},
      {"training:\n  lr_schedule: 0.5\n",
       "line 9: training.lr_schedule: expected a mapping, got 0.5"},
      {"training:\n  lr_schedule:\n    kind: cosine\n",
       "line 10: training.lr_schedule.kind: unknown value \"cosine\" (expected one of: none, "
       "reduce_on_plateau)"},
      {"training:\n  seed: -1\n",
       "line 9: training.seed: expected a non-negative integer, got -1"},
      {"model:\n  quantiles: 0.5\n",
       "line 9: model.quantiles: expected a sequence of numbers, got 0.5"},
      {"model:\n  quantiles: [0.1, half]\n",
       "line 9: model.quantiles[1]: expected a number, got \"half\""},
      {"model:\n  unit_chunks: {lstm_encoder: 0}\n",
       "line 9: model.unit_chunks.lstm_encoder: expected a positive integer, got 0"},
      {"split:\n  validation_fraction: yes\n",
       "line 9: split.validation_fraction: expected a number, got \"yes\""},
      {"output:\n  directory: [a]\n",
       "line 9: output.directory: expected a string, got a sequence"},
      {"windows2: 1\n", "line 8: config: unknown key 'windows2'"},
  };
  for (const Case& c : cases) {
    TFT_ASSERT_THROWS_WITH(tft::load_train_config_string(with_line(c.extra)), tft::ConfigError,
                           c.message);
  }
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string("data:\n  path: a.csv\n  time_column: t\n  target: 5\n"),
      tft::ConfigError, "line 4: data.target: expected a string, got 5");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string("data:\n  path: a.csv\n  delimiter: ab\n"),
      tft::ConfigError, "line 3: data.delimiter: expected one character, got \"ab\"");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string("data:\n  known_categoricals: [3]\n"), tft::ConfigError,
      "line 2: data.known_categoricals[0]: expected a column name or a mapping {name, "
      "embedding_dim}, got 3");
}

TFT_TEST(test_validation_errors_point_at_the_key) {
  struct Case {
    const char* extra;
    const char* message;
  };
  const Case cases[] = {
      {"model:\n  dropout: 1.5\n", "line 9: model.dropout: must be in [0, 1) (got 1.5)"},
      {"model:\n  hidden_size: 30\n",
       "line 9: model.hidden_size: 30 is not divisible by model.attention_heads 4"},
      {"model:\n  quantiles: [0.5, 0.1]\n",
       "line 9: model.quantiles[1]: must be strictly increasing"},
      {"model:\n  unit_chunks: {lstm_encoderr: 2}\n",
       "line 9: model.unit_chunks: unknown unit 'lstm_encoderr'"},
      {"split:\n  validation_fraction: 0.2\n  validation_steps: 10\n",
       "line 8: split: give validation_fraction or validation_steps, not both"},
      {"split:\n  validation_fraction: 1.0\n",
       "line 9: split.validation_fraction: must be in [0, 1) (got 1)"},
      {"split:\n  validation_steps: 3\n",
       "line 9: split.validation_steps: must be 0 (no validation) or at least "
       "windows.prediction_length 6 (got 3)"},
      {"training:\n  lr_schedule:\n    factor: 1.5\n",
       "line 10: training.lr_schedule.factor: must be in (0, 1) (got 1.5)"},
      {"training:\n  learning_rate: 0\n",
       "line 9: training.learning_rate: must be a positive number (got 0)"},
      {"training:\n  device: gpu\n",
       "line 9: training.device: expected cpu, cuda or cuda:<index> (got \"gpu\")"},
      {"training:\n  distributed:\n    backend: mpi\n",
       "line 10: training.distributed.backend: unknown value \"mpi\" (expected one of: auto, "
       "gloo, nccl)"},
      {"training:\n  distributed:\n    timeout_seconds: 0\n",
       "line 10: training.distributed.timeout_seconds: expected a positive integer, got 0"},
      {"training:\n  qat:\n    enabled: yes please\n",
       "line 10: training.qat.enabled: expected true or false, got \"yes please\""},
      {"training:\n  qat:\n    enabled: true\n    weight_bits: 9\n",
       "line 11: training.qat.weight_bits: must be in [2, 8] (got 9)"},
      {"training:\n  qat:\n    enabled: true\n    start_epoch: 2\n    freeze_observers_epoch: 1\n",
       "line 12: training.qat.freeze_observers_epoch: 1 is before training.qat.start_epoch 2"},
      {"checkpoint:\n  strategy: uniform\n  interval: 0\n",
       "line 10: checkpoint.interval: must be at least 1 (got 0)"},
      {"checkpoint:\n  strategy: selective\n  layers: [attention_3]\n",
       "line 10: checkpoint.layers[0]: unknown unit 'attention_3'"},
  };
  for (const Case& c : cases) {
    TFT_ASSERT_THROWS_WITH(tft::load_train_config_string(with_line(c.extra)), tft::ConfigError,
                           c.message);
  }
  // Keys of the data section, inserted as its line 5.
  const Case data_cases[] = {
      {"  known_reals: [sales]\n",
       "line 5: data.known_reals[0]: column 'sales' is already used by data.target"},
      {"  unknown_reals: [date]\n", "line 5: data.unknown_reals[0]: 'date' is the time column"},
      {"  known_categoricals: [relative_time_idx]\n",
       "line 5: data.known_categoricals[0]: relative_time_idx is a real"},
      {"  format: feather\n",
       "line 5: data.format: unsupported format \"feather\" (expected: auto, csv or parquet)"},
      {"  target_normalizer: {scope: series}\n",
       "line 5: data.target_normalizer.center: last needs data.target_normalizer.scope encoder"},
      {"  target_normalizer: {transformation: sqrt}\n",
       "line 5: data.target_normalizer.transformation: unknown value \"sqrt\" (expected one of: "
       "none, log, log1p, softplus)"},
  };
  for (const Case& c : data_cases) {
    std::string text = kMinimal;
    text.insert(text.find("windows:"), c.extra);
    TFT_ASSERT_THROWS_WITH(tft::load_train_config_string(text), tft::ConfigError, c.message);
  }
  // A required key that is missing points at its section.
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string("data:\n  path: a.csv\n  time_column: t\nwindows:\n"
                                    "  encoder_length: 2\n  prediction_length: 1\n"),
      tft::ConfigError, "line 1: data.target: required");
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_string(""), tft::ConfigError,
                         "expected a mapping of sections");
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_string("data: [\n"), tft::ConfigError,
                         "invalid YAML");
}

TFT_TEST(test_struct_validation_names_the_field) {
  tft::TrainConfig c = tft::load_train_config_string(kMinimal, "/x");
  c.validate();
  c.training.epochs = 0;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "training.epochs: must be at least 1 (got 0)");
  const auto problem = c.find_problem();
  assert_true(problem.has_value());
  assert_string_equal(problem->field.c_str(), "training.epochs");
  c.training.epochs = 1;
  c.windows.stride = 0;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "windows.stride: must be at least 1 (got 0)");
  c.windows.stride = 1;
  c.split.validation_fraction.reset();
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "split: give validation_fraction or validation_steps");
  c.split.validation_steps = 0;  // no validation
  c.validate();
  c.data.group_columns = {"store"};
  c.data.known_reals = {"store"};
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "data.known_reals[0]: 'store' is a group column");
  c.data.known_reals.clear();
  c.data.static_categoricals = {{"store", 0}};  // a group column may be a static input
  c.validate();
  c.data.format = "parquet";
  c.validate();
  c.data.format = "xlsx";
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "data.format: unsupported format \"xlsx\" (expected: auto, csv or parquet)");
}

TFT_TEST(test_relative_paths_resolve_against_the_file_folder) {
  const std::string path =
      write_file("configs/nested/run.yaml",
                 "data:\n  path: ../../data/sales.csv\n  time_column: date\n  target: sales\n"
                 "windows:\n  encoder_length: 4\n  prediction_length: 2\n"
                 "output:\n  directory: out\n");
  const tft::TrainConfig c = tft::load_train_config_file(path);
  assert_string_equal(c.data.path.c_str(), (temp_dir() + "/data/sales.csv").c_str());
  assert_string_equal(c.output.directory.c_str(), (temp_dir() + "/configs/nested/out").c_str());
  assert_string_equal(c.base_dir.c_str(), (temp_dir() + "/configs/nested").c_str());
  // Absolute paths are kept.
  const tft::TrainConfig abs = tft::load_train_config_string(
      "data:\n  path: /data/x.csv\n  time_column: t\n  target: y\n"
      "windows:\n  encoder_length: 4\n  prediction_length: 2\n",
      "/elsewhere");
  assert_string_equal(abs.data.path.c_str(), "/data/x.csv");
  // A relative config path is made absolute first.
  const std::string cwd = fs::current_path().string();
  assert_int_equal(chdir(temp_dir().c_str()), 0);
  const tft::TrainConfig from_relative = tft::load_train_config_file("configs/nested/run.yaml");
  assert_int_equal(chdir(cwd.c_str()), 0);
  assert_string_equal(from_relative.data.path.c_str(), c.data.path.c_str());
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_file(temp_dir() + "/missing.yaml"),
                         tft::IoError, "cannot read config file");
}

TFT_TEST(test_dotted_get) {
  const tft::TrainConfig c = tft::load_train_config_string(kFull, "/srv/tft");
  struct Case {
    const char* key;
    const char* value;
  };
  const Case cases[] = {
      {"training.epochs", "15"},
      {"training.learning_rate", "0.003"},
      {"training.seed", "12345678901234"},
      {"training.device", "cuda:1"},
      {"training.distributed.backend", "gloo"},
      {"training.distributed.timeout_seconds", "30"},
      {"training.lr_schedule.kind", "reduce_on_plateau"},
      {"training.lr_schedule.min_lr", "1e-05"},
      {"training.lr_schedule",
       "{kind: reduce_on_plateau, factor: 0.3, patience: 2, min_lr: 1e-05, threshold: 0.0, "
       "cooldown: 0}"},
      {"data.path", "/srv/tft/data/sales.csv"},
      {"data.delimiter", "\";\""},
      {"data.group_columns", "[store, item]"},
      {"data.static_categoricals", "[store, {name: region, embedding_dim: 3}]"},
      {"data.na_values", "[\"\", NA, n/a]"},
      {"data.missing_values", "forward_fill"},
      {"windows", "{encoder_length: 30, prediction_length: 7, stride: 2}"},
      {"split.validation_steps", "60"},
      {"split.validation_fraction", "null"},
      {"model.quantiles", "[0.1, 0.5, 0.9]"},
      {"model.unit_chunks", "{attention_1: 2, lstm_encoder: 4}"},
      {"model.unit_chunks.lstm_encoder", "4"},
      {"checkpoint.strategy", "selective"},
      {"checkpoint.layers", "[3, 6]"},
      {"checkpoint",
       "{strategy: selective, layers: [3, 6], checkpoint_attention: true, checkpoint_ffn: "
       "false, min_checkpoint_interval: 1}"},
      {"output.directory", "/srv/tft/runs/sales"},
  };
  for (const Case& k : cases) {
    const std::string got = tft::get_config_value(c, k.key);
    if (got != k.value) fail_msg("%s: got '%s', expected '%s'", k.key, got.c_str(), k.value);
  }
  TFT_ASSERT_THROWS_WITH(tft::get_config_value(c, "training.epoch"), tft::ConfigError,
                         "training: unknown key 'epoch' (expected one of: epochs,");
  TFT_ASSERT_THROWS_WITH(tft::get_config_value(c, "nope.x"), tft::ConfigError,
                         "unknown key 'nope.x'");
  TFT_ASSERT_THROWS_WITH(tft::get_config_value(c, "checkpoint.interval"), tft::ConfigError,
                         "checkpoint.interval: no such key for strategy 'selective'");
  TFT_ASSERT_THROWS_WITH(tft::get_config_value(c, "model.unit_chunks.lstm_decoder"),
                         tft::ConfigError, "no entry for unit 'lstm_decoder'");
}

TFT_TEST(test_dotted_set) {
  tft::TrainConfig c = tft::load_train_config_string(kMinimal, "/base");
  tft::set_config_value(c, "training.epochs", "5");
  assert_int_equal(c.training.epochs, 5);
  tft::set_config_value(c, "training.lr_schedule.factor", "0.25");
  assert_true(c.training.lr_schedule.factor == 0.25);
  tft::set_config_value(c, "training.lr_schedule", "{kind: none, patience: 7}");
  assert_true(c.training.lr_schedule.kind == tft::LrScheduleKind::None);
  assert_int_equal(c.training.lr_schedule.patience, 7);
  tft::set_config_value(c, "model.quantiles", "[0.2, 0.8]");
  assert_int_equal(c.model.quantiles.size(), 2);
  tft::set_config_value(c, "data.known_categoricals", "[promo, {name: month, embedding_dim: 4}]");
  assert_int_equal(c.data.known_categoricals[1].embedding_dim, 4);
  tft::set_config_value(c, "data.path", "other/data.csv");
  assert_string_equal(c.data.path.c_str(), "/base/other/data.csv");
  tft::set_config_value(c, "data.delimiter", "\"\\t\"");
  assert_int_equal(c.data.delimiter, '\t');
  tft::set_config_value(c, "training.device", "cuda");
  tft::set_config_value(c, "training.seed", "18446744073709551615");
  assert_true(c.training.seed == 18446744073709551615ULL);

  // Split: setting one key clears the other; null clears.
  tft::set_config_value(c, "split.validation_steps", "30");
  assert_false(c.split.validation_fraction.has_value());
  assert_int_equal(*c.split.validation_steps, 30);
  tft::set_config_value(c, "split.validation_fraction", "0.1");
  assert_false(c.split.validation_steps.has_value());
  tft::set_config_value(c, "split", "{validation_steps: 12}");
  assert_false(c.split.validation_fraction.has_value());
  assert_int_equal(*c.split.validation_steps, 12);

  // Unit chunks by unit; null removes.
  tft::set_config_value(c, "model.unit_chunks.lstm_encoder", "3");
  assert_int_equal(c.model.unit_chunks.at("lstm_encoder"), 3);
  tft::set_config_value(c, "model.unit_chunks.lstm_encoder", "null");
  assert_int_equal(c.model.unit_chunks.count("lstm_encoder"), 0);

  // Checkpoint: a whole section, or one key re-read with the section's rules.
  tft::set_config_value(c, "checkpoint", "{strategy: uniform, interval: 2}");
  assert_true(c.checkpoint == tft::CheckpointConfig::uniform(2));
  tft::set_config_value(c, "checkpoint.interval", "3");
  assert_true(c.checkpoint == tft::CheckpointConfig::uniform(3));
  tft::set_config_value(c, "checkpoint.checkpoint_ffn", "false");
  assert_false(c.checkpoint.checkpoint_ffn);
  tft::set_config_value(c, "checkpoint.strategy", "none");
  assert_string_equal(c.checkpoint.strategy_name().c_str(), "none");
  tft::set_config_value(c, "checkpoint", "{strategy: selective, layers: [lstm_decoder]}");
  assert_true(c.checkpoint == tft::CheckpointConfig::selective({4}));
  c.validate();

  // Errors: same rules and messages as the file reader, without a line; config unchanged.
  const tft::TrainConfig before = c;
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epochs", "ten"), tft::ConfigError,
                         "training.epochs: expected a positive integer, got \"ten\"");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epochs", "\"10\""),
                         tft::ConfigError,
                         "training.epochs: expected a positive integer, got \"10\"");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.lr_schedule", "{kind: none, x: 1}"),
                         tft::ConfigError, "training.lr_schedule: unknown key 'x'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epoch", "5"), tft::ConfigError,
                         "training: unknown key 'epoch'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.strategy", "uniform"),
                         tft::ConfigError, "checkpoint: strategy 'uniform' requires key 'interval'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.layers", "[attention_9]"),
                         tft::ConfigError, "checkpoint.layers[0]: unknown unit 'attention_9'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "model.quantiles", "[0.1, [0.5]]"),
                         tft::ConfigError, "model.quantiles[1]: expected a number, got a sequence");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epochs", "[1"), tft::ConfigError,
                         "training.epochs: invalid YAML value");
  assert_true(c == before);

  // Types only: range rules wait for validate().
  tft::set_config_value(c, "model.dropout", "2.0");
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError, "model.dropout: must be in [0, 1)");
}

TFT_TEST(test_set_of_every_get_is_identity) {
  const tft::TrainConfig original = tft::load_train_config_string(kFull, "/srv/tft");
  const std::vector<std::string> keys = {
      "data",     "data.path",  "data.delimiter",   "data.static_categoricals",
      "data.na_values", "windows", "split",         "split.validation_steps",
      "model",    "model.unit_chunks", "training",  "training.lr_schedule",
      "training.lr_schedule.min_lr", "training.seed", "checkpoint", "output"};
  for (const std::string& key : keys) {
    tft::TrainConfig c = original;
    tft::set_config_value(c, key, tft::get_config_value(original, key));
    if (c != original) fail_msg("set(get(%s)) changed the config", key.c_str());
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_minimal_loads_with_defaults_and_resolved_paths),
      cmocka_unit_test(test_full_config_values),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_unknown_key_names_file_and_line),
      cmocka_unit_test(test_wrong_types_name_key_type_and_value),
      cmocka_unit_test(test_validation_errors_point_at_the_key),
      cmocka_unit_test(test_struct_validation_names_the_field),
      cmocka_unit_test(test_relative_paths_resolve_against_the_file_folder),
      cmocka_unit_test(test_dotted_get),
      cmocka_unit_test(test_dotted_set),
      cmocka_unit_test(test_set_of_every_get_is_identity),
  };
  const int failures = cmocka_run_group_tests(tests, nullptr, nullptr);
  std::error_code ec;
  fs::remove_all(temp_dir(), ec);
  return failures;
}
