// ModelConfig validation: every rule, with a message that names the field and the rule.
#include "common/error.h"
#include "model/model_config.h"

#include <cmath>
#include <functional>
#include <string>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::ConfigError;
using tft::ModelConfig;

namespace {

ModelConfig valid_config() {
  ModelConfig c;
  c.encoder_length = 24;
  c.prediction_length = 6;
  c.schema.target = "sales";
  c.schema.known_reals = {"price"};
  c.schema.unknown_reals = {"visits"};
  c.schema.static_categoricals = {{"store", 10, 0}};
  return c;
}

void expect_error(const std::function<void(ModelConfig&)>& change, const char* message) {
  ModelConfig c = valid_config();
  change(c);
  TFT_ASSERT_THROWS_WITH(c.validate(), ConfigError, message);
}

}  // namespace

TFT_TEST(defaults_and_a_valid_config) {
  ModelConfig c;
  assert_int_equal(c.hidden_size, 64);
  assert_int_equal(c.attention_heads, 4);
  assert_true(c.dropout == 0.1);
  assert_true(c.embedding_dropout == 0.0);
  assert_int_equal(c.lstm_layers, 1);
  assert_int_equal(c.decoder_layers, 1);
  assert_int_equal(c.quantiles.size(), 3);
  valid_config().validate();
}

TFT_TEST(hyper_parameter_rules) {
  expect_error([](ModelConfig& c) { c.hidden_size = 30; },
               "model.hidden_size: 30 is not divisible by model.attention_heads 4");
  expect_error([](ModelConfig& c) { c.hidden_size = 0; },
               "model.hidden_size: must be at least 1 (got 0)");
  expect_error([](ModelConfig& c) { c.attention_heads = 0; },
               "model.attention_heads: must be at least 1 (got 0)");
  expect_error([](ModelConfig& c) { c.dropout = 1.0; }, "model.dropout: must be in [0, 1) (got 1)");
  expect_error([](ModelConfig& c) { c.dropout = -0.5; },
               "model.dropout: must be in [0, 1) (got -0.5)");
  expect_error([](ModelConfig& c) { c.dropout = std::nan(""); },
               "model.dropout: must be in [0, 1)");
  expect_error([](ModelConfig& c) { c.embedding_dropout = 1.0; },
               "model.embedding_dropout: must be in [0, 1) (got 1)");
  expect_error([](ModelConfig& c) { c.embedding_dropout = std::nan(""); },
               "model.embedding_dropout: must be in [0, 1)");
  expect_error([](ModelConfig& c) { c.lstm_layers = 0; },
               "model.lstm_layers: must be at least 1 (got 0)");
  expect_error([](ModelConfig& c) { c.decoder_layers = 0; },
               "model.decoder_layers: must be at least 1 (got 0)");
  expect_error([](ModelConfig& c) { c.encoder_length = 0; },
               "model.encoder_length: must be at least 1 (got 0)");
  expect_error([](ModelConfig& c) { c.prediction_length = -3; },
               "model.prediction_length: must be at least 1 (got -3)");
}

TFT_TEST(quantile_rules) {
  expect_error([](ModelConfig& c) { c.quantiles.clear(); },
               "model.quantiles: must list at least one quantile");
  expect_error([](ModelConfig& c) { c.quantiles = {0.1, 0.9, 0.5}; },
               "model.quantiles[2]: must be strictly increasing (0.5 follows 0.9)");
  expect_error([](ModelConfig& c) { c.quantiles = {0.5, 0.5}; },
               "model.quantiles[1]: must be strictly increasing (0.5 follows 0.5)");
  expect_error([](ModelConfig& c) { c.quantiles = {0.0, 0.5}; },
               "model.quantiles[0]: must be in (0, 1) (got 0)");
  expect_error([](ModelConfig& c) { c.quantiles = {0.5, 1.2}; },
               "model.quantiles[1]: must be in (0, 1) (got 1.2)");
}

TFT_TEST(schema_rules) {
  expect_error([](ModelConfig& c) { c.schema = tft::InputSchema{}; },
               "model.schema.target: is empty");
  expect_error([](ModelConfig& c) { c.schema.known_reals.push_back("visits"); },
               "model.schema: duplicate variable name 'visits' (known_reals[1] and "
               "unknown_reals[0])");
  expect_error([](ModelConfig& c) { c.schema.unknown_reals.push_back("sales"); },
               "model.schema: duplicate variable name 'sales' (target and unknown_reals[1])");
  expect_error([](ModelConfig& c) { c.schema.known_categoricals.push_back({"store", 3, 0}); },
               "duplicate variable name 'store' (static_categoricals[0] and "
               "known_categoricals[0])");
  expect_error([](ModelConfig& c) { c.schema.static_categoricals[0].cardinality = 0; },
               "model.schema.static_categoricals[0] 'store': cardinality must be at least 1 "
               "(got 0)");
  expect_error([](ModelConfig& c) { c.schema.unknown_categoricals.push_back({"e", 4, -2}); },
               "model.schema.unknown_categoricals[0] 'e': embedding_dim must be 0 (automatic) "
               "or positive (got -2)");
  expect_error([](ModelConfig& c) { c.schema.known_reals.push_back(""); },
               "model.schema.known_reals[1]: variable name is empty");
}

// The decoder's units take chunks about as long as the encoder's (encoder_length / 8 steps),
// from 1 to 4; the encoder's units 8, attention 4, the static encoder 1.
TFT_TEST(default_chunks_follow_the_window_lengths) {
  ModelConfig c = valid_config();
  const auto decoder_chunks = [&c](std::int64_t encoder, std::int64_t horizon) {
    c.encoder_length = encoder;
    c.prediction_length = horizon;
    assert_int_equal(c.default_unit_chunks("lstm_decoder"),
                     c.default_unit_chunks("future_encoder"));
    return c.default_unit_chunks("future_encoder");
  };
  assert_int_equal(decoder_chunks(168, 24), 1);  // the reference: 24 steps against 21
  assert_int_equal(decoder_chunks(168, 32), 2);  // 1.52 chunks of 21 steps
  assert_int_equal(decoder_chunks(168, 48), 2);
  assert_int_equal(decoder_chunks(168, 168), 4);  // at most 4
  assert_int_equal(decoder_chunks(24, 24), 4);
  assert_int_equal(decoder_chunks(168, 1), 1);  // at least 1
  assert_int_equal(decoder_chunks(0, 0), 4);    // lengths not set yet
  assert_int_equal(c.default_unit_chunks("historical_encoder"), 8);
  assert_int_equal(c.default_unit_chunks("lstm_encoder"), 8);
  assert_int_equal(c.default_unit_chunks("attention_0"), 4);
  assert_int_equal(c.default_unit_chunks("static_encoder"), 1);
  c.unit_chunks["future_encoder"] = 3;  // a configured count wins
  c.encoder_length = 168;
  c.prediction_length = 24;
  assert_int_equal(c.chunks_for("future_encoder", 64), 3);
  assert_int_equal(c.chunks_for("lstm_decoder", 64), 1);
}

// A default chunk holds at least min_chunk_elements (rows x steps x hidden) a tensor: small
// batches and narrow models run in fewer chunks; a configured count is kept whatever the size.
TFT_TEST(default_chunks_shrink_to_hold_a_minimum_size) {
  ModelConfig c = valid_config();
  c.encoder_length = 168;
  c.prediction_length = 24;
  c.hidden_size = 160;
  // The reference (batch 64): 21-step encoder chunks of 215,040 elements, the defaults.
  assert_int_equal(c.chunks_for("historical_encoder", 64), 8);
  assert_int_equal(c.chunks_for("attention_0", 64), 4);
  c.hidden_size = 16;  // the host-bound configuration, batch 8: 21,504 encoder elements
  assert_int_equal(c.chunks_for("historical_encoder", 8),
                   21504 / ModelConfig::kDefaultMinChunkElements);
  assert_int_equal(c.chunks_for("lstm_encoder", 8), 2);
  assert_int_equal(c.chunks_for("attention_0", 8), 3);  // 192 steps: 24,576 elements
  assert_int_equal(c.chunks_for("future_encoder", 8), 1);
  assert_int_equal(c.chunks_for("historical_encoder", 1), 1);     // never fewer than one
  assert_int_equal(c.chunks_for("historical_encoder", 1024), 8);  // never more than the default
  assert_int_equal(c.chunks_for("static_encoder", 1024), 1);
  c.unit_chunks["historical_encoder"] = 6;
  assert_int_equal(c.chunks_for("historical_encoder", 1), 6);
}

TFT_TEST(unit_chunk_rules) {
  expect_error([](ModelConfig& c) { c.unit_chunks["attention_1"] = 2; },
               "model.unit_chunks: unknown unit 'attention_1' (units: static_encoder, "
               "historical_encoder, future_encoder, lstm_encoder, lstm_decoder, attention_0)");
  expect_error([](ModelConfig& c) { c.unit_chunks["lstm_encoder"] = 0; },
               "model.unit_chunks.lstm_encoder: must be at least 1 (got 0)");
  ModelConfig c = valid_config();
  c.decoder_layers = 2;
  c.unit_chunks["attention_1"] = 3;
  c.validate();
  assert_int_equal(c.chunks_for("attention_1", 1), 3);
  assert_int_equal(c.chunks_for("attention_0", 1 << 20), c.default_unit_chunks("attention_0"));
}

TFT_TEST(units_and_variable_order) {
  ModelConfig c = valid_config();
  c.decoder_layers = 2;
  const std::vector<std::string> units{"static_encoder", "historical_encoder", "future_encoder",
                                       "lstm_encoder",   "lstm_decoder",       "attention_0",
                                       "attention_1"};
  assert_true(c.unit_names() == units);
  c.schema.known_categoricals = {{"weekday", 7, 0}};
  c.schema.unknown_categoricals = {{"event", 4, 0}};
  const std::vector<std::string> historical{"visits", "price", "sales", "event", "weekday"};
  assert_true(c.schema.historical_variables() == historical);
  const std::vector<std::string> future{"price", "weekday"};
  assert_true(c.schema.future_variables() == future);
}

TFT_TEST(automatic_embedding_width) {
  // round(1.6 * 10^0.56) = round(5.82) = 6; capped by hidden; an explicit width wins.
  assert_int_equal(tft::embedding_dim_for({"a", 10, 0}, 64), 6);
  assert_int_equal(tft::embedding_dim_for({"a", 100000, 0}, 64), 64);
  assert_int_equal(tft::embedding_dim_for({"a", 1, 0}, 64), 2);
  assert_int_equal(tft::embedding_dim_for({"a", 10, 9}, 64), 9);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_and_a_valid_config),
      cmocka_unit_test(hyper_parameter_rules),
      cmocka_unit_test(quantile_rules),
      cmocka_unit_test(schema_rules),
      cmocka_unit_test(default_chunks_follow_the_window_lengths),
      cmocka_unit_test(default_chunks_shrink_to_hold_a_minimum_size),
      cmocka_unit_test(unit_chunk_rules),
      cmocka_unit_test(units_and_variable_order),
      cmocka_unit_test(automatic_embedding_width),
  };
  return cmocka_run_group_tests_name("model_config", tests, nullptr, nullptr);
}
