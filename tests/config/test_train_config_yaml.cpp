// TrainConfig from YAML: defaults, every key read, round trips, file/line/key messages for
// unknown keys and wrong types, and relative paths.
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>  // chdir

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"

#include "config/train_config_test_support.h"

using namespace tft::testing;

TFT_TEST(test_defaults) {
  const tft::TrainConfig c;
  assert_int_equal(c.training.epochs, 20);
  assert_int_equal(c.training.batch_size, 64);
  assert_true(c.split.validation_fraction.has_value());
  assert_false(c.split.validation_steps.has_value());
  assert_int_equal(c.model.hidden_size, tft::ModelConfig().hidden_size);
  assert_true(c.checkpoint == tft::CheckpointConfig::none());
  assert_string_equal(c.output.directory.c_str(), "output");
  assert_true(c.training.precision == tft::Precision::Float32);
  // Regularisation and warm-up are off by default: runs train as they did before the keys.
  assert_true(c.training.weight_decay == 0.0);
  assert_int_equal(c.training.lr_warmup_steps, 0);
  assert_true(c.model.embedding_dropout == 0.0);
  assert_true(tft::ModelConfig().embedding_dropout == 0.0);
  // Required fields are empty by default: validate names the first (data.path is optional:
  // data may come in memory).
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError, "data.time_column: required");
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
  assert_true(c.training.weight_decay == 0.01);
  assert_int_equal(c.training.lr_warmup_steps, 200);
  assert_true(c.model.embedding_dropout == 0.05);
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
  assert_true(m.embedding_dropout == 0.05);
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
                                 "batch_size")
                             .c_str());
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_string(with_line("trainig:\n  epochs: 5\n")),
                         tft::ConfigError,
                         "line 8: config: unknown key 'trainig' (expected one of: data, windows");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string(with_line("training:\n  lr_schedule:\n    factr: 0.1\n")),
      tft::ConfigError, "line 10: training.lr_schedule: unknown key 'factr'");
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_string(with_line("  stride: 1\n  stride: 2\n")),
                         tft::ConfigError, "line 9: windows: duplicate key 'stride'");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string("data:\n  path: a.csv\n  time_column: t\n  target: y\n"
                                    "  known_categoricals: [{name: promo, dim: 2}]\n"
                                    "windows: {encoder_length: 2, prediction_length: 1}\n"),
      tft::ConfigError, "line 5: data.known_categoricals[0]: unknown key 'dim'");
}

TFT_TEST(test_wrong_types_name_key_type_and_value) {
  const std::string path = write_file("sp500.yaml", with_line("training:\n  epochs: ten\n"));
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_file(path), tft::ConfigError,
      (path + ":9: training.epochs: expected a positive integer, got \"ten\"").c_str());
  struct Case {
    const char* extra;
    const char* message;
  };
  const Case cases[] = {
      {"training:\n  epochs: \"10\"\n",
       "line 9: training.epochs: expected a positive integer, got \"10\""},
      {"training:\n  epochs: 0\n", "line 9: training.epochs: expected a positive integer, got 0"},
      {"training:\n  epochs: -3\n", "line 9: training.epochs: expected a positive integer, got -3"},
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
      {"training:\n  seed: -1\n", "line 9: training.seed: expected a non-negative integer, got -1"},
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
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_string("data:\n  path: a.csv\n  delimiter: ab\n"),
                         tft::ConfigError,
                         "line 3: data.delimiter: expected one character, got \"ab\"");
  TFT_ASSERT_THROWS_WITH(
      tft::load_train_config_string("data:\n  known_categoricals: [3]\n"), tft::ConfigError,
      "line 2: data.known_categoricals[0]: expected a column name or a mapping {name, "
      "embedding_dim}, got 3");
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
  const std::string cwd = std::filesystem::current_path().string();
  assert_int_equal(chdir(temp_dir().c_str()), 0);
  const tft::TrainConfig from_relative = tft::load_train_config_file("configs/nested/run.yaml");
  assert_int_equal(chdir(cwd.c_str()), 0);
  assert_string_equal(from_relative.data.path.c_str(), c.data.path.c_str());
  TFT_ASSERT_THROWS_WITH(tft::load_train_config_file(temp_dir() + "/missing.yaml"), tft::IoError,
                         "cannot read config file");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_minimal_loads_with_defaults_and_resolved_paths),
      cmocka_unit_test(test_full_config_values),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_unknown_key_names_file_and_line),
      cmocka_unit_test(test_wrong_types_name_key_type_and_value),
      cmocka_unit_test(test_relative_paths_resolve_against_the_file_folder),
  };
  const int failures = cmocka_run_group_tests(tests, nullptr, nullptr);
  remove_temp_dir();
  return failures;
}
