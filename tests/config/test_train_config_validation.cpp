// TrainConfig validation: a broken rule read from YAML points at the key's line, and
// validate() on a struct names the field.
#include <string>
#include <vector>

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"

#include "config/train_config_test_support.h"

using namespace tft::testing;

TFT_TEST(test_validation_errors_point_at_the_key) {
  struct Case {
    const char* extra;
    const char* message;
  };
  const Case cases[] = {
      {"model:\n  dropout: 1.5\n", "line 9: model.dropout: must be in [0, 1) (got 1.5)"},
      {"model:\n  embedding_dropout: 1\n",
       "line 9: model.embedding_dropout: must be in [0, 1) (got 1)"},
      {"model:\n  embedding_dropout: -0.1\n",
       "line 9: model.embedding_dropout: must be in [0, 1) (got -0.1)"},
      {"model:\n  embedding_dropout: high\n",
       "line 9: model.embedding_dropout: expected a number, got \"high\""},
      {"training:\n  weight_decay: -0.01\n",
       "line 9: training.weight_decay: must be 0 (off) or a positive number (got -0.01)"},
      {"training:\n  weight_decay: .inf\n",
       "line 9: training.weight_decay: must be 0 (off) or a positive number (got inf)"},
      {"training:\n  lr_warmup_steps: -5\n",
       "line 9: training.lr_warmup_steps: expected a non-negative integer, got -5"},
      {"training:\n  lr_warmup_steps: 2.5\n",
       "line 9: training.lr_warmup_steps: expected a non-negative integer, got 2.5"},
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
      {"training:\n  precision: 16\n",
       "line 9: training.precision: expected one of: 32, 32-true, bf16-mixed, 16-mixed; got 16"},
      {"training:\n  precision: fp16\n",
       "line 9: training.precision: unknown value \"fp16\" (expected one of: 32, 32-true, "
       "bf16-mixed, 16-mixed)"},
      {"training:\n  precision: 16-mixed\n",
       "training.precision: 16-mixed needs a CUDA device (training.device is cpu)"},
      {"training:\n  precision: bf16-mixed\n  qat:\n    enabled: true\n",
       "training.precision: bf16-mixed cannot be combined with training.qat.enabled: "
       "quantization-aware training emulates the int8 model in float32"},
      {"checkpoint:\n  memory_budget: 3.5GB\n",
       "line 9: checkpoint.memory_budget: unknown unit 'GB' in \"3.5GB\": sizes take binary "
       "units (1 KiB = 1024 bytes); did you mean 3.5GiB?"},
      {"checkpoint:\n  memory_budget: 0\n",
       "line 9: checkpoint.memory_budget: must be more than 0 bytes (got 0)"},
      {"checkpoint:\n  strategy: dynamic\n  num_layers: 6\n  memory_fraction: 0.5\n"
       "  memory_budget: 1GiB\n",
       "line 12: checkpoint.memory_budget: give either strategy 'dynamic'"},
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
      {"  target_normalizer: {scope: series, center: last}\n",
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
  c.training.weight_decay = -1.0;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "training.weight_decay: must be 0 (off) or a positive number (got -1)");
  c.training.weight_decay = 0.0;
  c.training.lr_warmup_steps = -1;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "training.lr_warmup_steps: must be at least 0 (got -1)");
  c.training.lr_warmup_steps = 0;
  c.model.embedding_dropout = 1.0;
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError,
                         "model.embedding_dropout: must be in [0, 1) (got 1)");
  c.model.embedding_dropout = 0.0;
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
  TFT_ASSERT_THROWS_WITH(
      c.validate(), tft::ConfigError,
      "data.format: unsupported format \"xlsx\" (expected: auto, csv or parquet)");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validation_errors_point_at_the_key),
      cmocka_unit_test(test_struct_validation_names_the_field),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
