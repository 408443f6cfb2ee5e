// TrainConfig get/set by dotted key (what the C API's tft_config_get_value/set_value use): values
// as YAML text, the setters' checks, and set(get(key)) changing nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"

#include "config/train_config_test_support.h"

using namespace tft::testing;

TFT_TEST(test_dotted_get) {
  const tft::TrainConfig c = tft::load_train_config_string(kFull, "/srv/tft");
  struct Case {
    const char* key;
    const char* value;
  };
  const Case cases[] = {
      {"training.epochs", "15"},
      {"training.learning_rate", "0.003"},
      {"training.weight_decay", "0.01"},
      {"training.lr_warmup_steps", "200"},
      {"model.embedding_dropout", "0.05"},
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
      {"model.output_init", "uniform"},
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
  tft::set_config_value(c, "training.weight_decay", "0.05");
  assert_true(c.training.weight_decay == 0.05);
  tft::set_config_value(c, "training.lr_warmup_steps", "500");
  assert_int_equal(c.training.lr_warmup_steps, 500);
  tft::set_config_value(c, "model.embedding_dropout", "0.1");
  assert_true(c.model.embedding_dropout == 0.1);
  assert_true(c.model.output_init == tft::OutputInit::Uniform);  // the default
  tft::set_config_value(c, "model.output_init", "center");
  assert_true(c.model.output_init == tft::OutputInit::Center);
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "model.output_init", "zero"), tft::ConfigError,
                         "model.output_init: unknown value \"zero\" (expected one of: center, "
                         "uniform)");
  assert_true(c.output.median_rounding == tft::MedianRounding::Auto);  // the default
  tft::set_config_value(c, "output.median_rounding", "whole");
  assert_true(c.output.median_rounding == tft::MedianRounding::Whole);
  assert_string_equal(tft::get_config_value(c, "output.median_rounding").c_str(), "whole");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "output.median_rounding", "nearest"),
                         tft::ConfigError,
                         "output.median_rounding: unknown value \"nearest\" (expected one of: "
                         "auto, whole, none)");
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
  // precision: Lightning's names; 32 as the YAML integer or a string, read back as 32.
  assert_string_equal(tft::get_config_value(c, "training.precision").c_str(), "32");
  tft::set_config_value(c, "training.precision", "bf16-mixed");
  assert_true(c.training.precision == tft::Precision::Bf16Mixed);
  assert_string_equal(tft::get_config_value(c, "training.precision").c_str(), "bf16-mixed");
  tft::set_config_value(c, "training.precision", "16-mixed");
  assert_true(c.training.precision == tft::Precision::Fp16Mixed);
  tft::set_config_value(c, "training.precision", "\"32-true\"");
  assert_true(c.training.precision == tft::Precision::Float32);
  tft::set_config_value(c, "training.precision", "bf16-mixed");
  tft::set_config_value(c, "training.precision", "32");
  assert_true(c.training.precision == tft::Precision::Float32);
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
  // chunk_every_unit: false unless set, read back either way, survives the section's rewrite.
  assert_string_equal(tft::get_config_value(c, "checkpoint.chunk_every_unit").c_str(), "false");
  tft::set_config_value(c, "checkpoint.chunk_every_unit", "true");
  assert_true(c.checkpoint.chunk_every_unit);
  assert_string_equal(tft::get_config_value(c, "checkpoint.chunk_every_unit").c_str(), "true");
  tft::set_config_value(c, "checkpoint.layers", "[lstm_decoder]");
  assert_true(c.checkpoint.chunk_every_unit);
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.chunk_every_unit", "yes please"),
                         tft::ConfigError, "checkpoint.chunk_every_unit: expected true or false");
  tft::set_config_value(c, "checkpoint.chunk_every_unit", "false");
  assert_true(c.checkpoint == tft::CheckpointConfig::selective({4}));
  c.validate();

  // Errors: same rules and messages as the file reader, without a line; config unchanged.
  const tft::TrainConfig before = c;
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epochs", "ten"), tft::ConfigError,
                         "training.epochs: expected a positive integer, got \"ten\"");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epochs", "\"10\""), tft::ConfigError,
                         "training.epochs: expected a positive integer, got \"10\"");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.lr_schedule", "{kind: none, x: 1}"),
                         tft::ConfigError, "training.lr_schedule: unknown key 'x'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epoch", "5"), tft::ConfigError,
                         "training: unknown key 'epoch'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.strategy", "uniform"),
                         tft::ConfigError,
                         "checkpoint: strategy 'uniform' requires key 'interval'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.layers", "[attention_9]"),
                         tft::ConfigError, "checkpoint.layers[0]: unknown unit 'attention_9'");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "model.quantiles", "[0.1, [0.5]]"),
                         tft::ConfigError, "model.quantiles[1]: expected a number, got a sequence");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.lr_warmup_steps", "-1"),
                         tft::ConfigError,
                         "training.lr_warmup_steps: expected a non-negative integer, got -1");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.weight_decay", "lots"),
                         tft::ConfigError,
                         "training.weight_decay: expected a number, got \"lots\"");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "training.epochs", "[1"), tft::ConfigError,
                         "training.epochs: invalid YAML value");
  assert_true(c == before);

  // Types only: range rules wait for validate().
  tft::set_config_value(c, "model.dropout", "2.0");
  TFT_ASSERT_THROWS_WITH(c.validate(), tft::ConfigError, "model.dropout: must be in [0, 1)");
}

TFT_TEST(test_dotted_memory_budget) {
  tft::TrainConfig c = tft::load_train_config_string(kMinimal, "/x");
  assert_string_equal(tft::get_config_value(c, "checkpoint.memory_budget").c_str(), "null");
  tft::set_config_value(c, "checkpoint.memory_budget", "900MiB");
  assert_int_equal(c.checkpoint.memory_budget->bytes, std::int64_t{900} << 20);
  // As in a file: a new budget turns both sub-layer flags on.
  assert_true(c.checkpoint.checkpoint_attention && c.checkpoint.checkpoint_ffn);
  assert_string_equal(tft::get_config_value(c, "checkpoint.memory_budget").c_str(), "900MiB");
  tft::set_config_value(c, "checkpoint.checkpoint_ffn", "false");
  tft::set_config_value(c, "checkpoint.memory_budget", "1GiB");  // a change keeps the flags
  assert_false(c.checkpoint.checkpoint_ffn);
  const tft::TrainConfig with_budget = c;
  tft::set_config_value(c, "checkpoint", tft::get_config_value(with_budget, "checkpoint"));
  assert_true(c == with_budget);
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.memory_budget", "3.5GB"),
                         tft::ConfigError,
                         "checkpoint.memory_budget: unknown unit 'GB' in \"3.5GB\"");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.memory_budget", "-1"),
                         tft::ConfigError, "checkpoint.memory_budget: must be more than 0 bytes");
  TFT_ASSERT_THROWS_WITH(tft::set_config_value(c, "checkpoint.interval", "1"), tft::ConfigError,
                         "checkpoint.interval: not used by strategy 'none'");
  TFT_ASSERT_THROWS_WITH(
      tft::set_config_value(c, "checkpoint",
                            "{strategy: uniform, interval: 1, memory_budget: 1GiB}"),
      tft::ConfigError, "checkpoint.memory_budget: strategy 'uniform' fixes the units");
  assert_true(c == with_budget);  // unchanged by the failures
  tft::set_config_value(c, "checkpoint.memory_budget", "null");
  assert_false(c.checkpoint.memory_budget.has_value());
  assert_string_equal(tft::get_config_value(c, "checkpoint.memory_budget").c_str(), "null");
  // auto is valid on either device: the CPU reads the host's limits, CUDA the device's.
  tft::set_config_value(c, "checkpoint.memory_budget", "auto");
  c.validate();
  c.training.device = "cuda";
  c.validate();
}

TFT_TEST(test_set_of_every_get_is_identity) {
  const tft::TrainConfig original = tft::load_train_config_string(kFull, "/srv/tft");
  const std::vector<std::string> keys = {"data",
                                         "data.path",
                                         "data.delimiter",
                                         "data.static_categoricals",
                                         "data.na_values",
                                         "windows",
                                         "split",
                                         "split.validation_steps",
                                         "model",
                                         "model.unit_chunks",
                                         "training",
                                         "training.lr_schedule",
                                         "training.lr_schedule.min_lr",
                                         "training.seed",
                                         "training.weight_decay",
                                         "training.lr_warmup_steps",
                                         "model.embedding_dropout",
                                         "checkpoint",
                                         "output"};
  for (const std::string& key : keys) {
    tft::TrainConfig c = original;
    tft::set_config_value(c, key, tft::get_config_value(original, key));
    if (c != original) fail_msg("set(get(%s)) changed the config", key.c_str());
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dotted_get),
      cmocka_unit_test(test_dotted_set),
      cmocka_unit_test(test_dotted_memory_budget),
      cmocka_unit_test(test_set_of_every_get_is_identity),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
