// CheckpointConfig <-> YAML / JSON: round trips for every strategy, defaults of missing keys,
// unit names, and bad inputs, each with the exact message text it must produce.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_config.h"
#include "checkpoint/checkpoint_config_io.h"
#include "checkpoint/checkpoint_config_json.h"
#include "checkpoint/checkpoint_config_yaml_node.h"
#include "common/error.h"

// cmocka last: it defines macros such as fail() that clash with C++ headers, and
// 1.1.5 has no extern "C" guard of its own.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}

using tft::CheckpointConfig;

namespace {

// The TFT units in forward order for a model with one decoder layer (DESIGN.md, "unit").
const tft::UnitNames kUnits = {"static_encoder", "historical_encoder", "future_encoder",
                               "lstm_encoder",   "lstm_decoder",       "attention_0"};

std::vector<CheckpointConfig> sample_configs() {
  return {
      CheckpointConfig::none(),
      CheckpointConfig::none().with_checkpoint_attention(true).with_min_interval(3),
      CheckpointConfig::uniform(2),
      CheckpointConfig::uniform(1).with_checkpoint_ffn(false),
      CheckpointConfig::uniform(7).with_checkpoint_attention(false).with_min_interval(2),
      CheckpointConfig::selective({0, 3}),
      CheckpointConfig::selective({}),
      CheckpointConfig::selective({5, 1, 4}).with_checkpoint_ffn(false),
      CheckpointConfig::dynamic(6, 0.3),
      CheckpointConfig::dynamic(10, 0.35).with_min_interval(4),
      CheckpointConfig::dynamic(1, 0.0),
      CheckpointConfig::dynamic(6, 1.0).with_checkpoint_attention(false),
      CheckpointConfig::dynamic(12, 1e-5),
      CheckpointConfig::dynamic(3, 0.1 + 0.2),  // not the shortest decimal: 0.30000000000000004
      CheckpointConfig::uniform(1).with_boundary_dtype(tft::BoundaryDtype::kBFloat16),
      CheckpointConfig::selective({1, 3}).with_boundary_dtype(tft::BoundaryDtype::kInt8),
      CheckpointConfig::dynamic(6, 0.3).with_boundary_dtype(tft::BoundaryDtype::kInt8),
      CheckpointConfig::none().with_boundary_dtype(tft::BoundaryDtype::kBFloat16),
      [] {
        CheckpointConfig c = CheckpointConfig::uniform(2);
        c.chunk_every_unit = true;
        return c;
      }(),
  };
}

// Runs `parse`, which must throw tft::ConfigError containing `expected`.
void expect_config_error(const std::function<void()>& parse, const std::string& expected,
                         const std::string& label) {
  try {
    parse();
  } catch (const tft::ConfigError& e) {
    if (std::strstr(e.what(), expected.c_str()) == nullptr) {
      fail_msg("%s: message \"%s\" does not contain \"%s\"", label.c_str(), e.what(),
               expected.c_str());
    }
    return;
  } catch (const std::exception& e) {
    fail_msg("%s: threw a non-ConfigError: %s", label.c_str(), e.what());
  }
  fail_msg("%s: no error thrown (expected \"%s\")", label.c_str(), expected.c_str());
}

CheckpointConfig yaml_ok(const std::string& text, const tft::UnitNames* units = nullptr) {
  try {
    return tft::checkpoint_config_from_yaml(text, units);
  } catch (const std::exception& e) {
    fail_msg("unexpected error for YAML:\n%s\n%s", text.c_str(), e.what());
  }
  return {};
}

CheckpointConfig json_ok(const std::string& text, const tft::UnitNames* units = nullptr) {
  try {
    return tft::checkpoint_config_from_json_string(text, units);
  } catch (const std::exception& e) {
    fail_msg("unexpected error for JSON:\n%s\n%s", text.c_str(), e.what());
  }
  return {};
}

void test_yaml_round_trip(void** state) {
  (void)state;
  for (const CheckpointConfig& c : sample_configs()) {
    const std::string text = tft::checkpoint_config_to_yaml(c);
    if (yaml_ok(text) != c)
      fail_msg("YAML round trip changed %s:\n%s", c.summary().c_str(), text.c_str());
  }
}

void test_json_round_trip(void** state) {
  (void)state;
  for (const CheckpointConfig& c : sample_configs()) {
    const std::string compact = tft::checkpoint_config_to_json_string(c, -1);
    const std::string pretty = tft::checkpoint_config_to_json_string(c);
    if (json_ok(compact) != c) fail_msg("JSON round trip changed:\n%s", compact.c_str());
    if (json_ok(pretty) != c) fail_msg("JSON round trip changed:\n%s", pretty.c_str());
    if (tft::checkpoint_config_from_json(tft::checkpoint_config_to_json(c)) != c) {
      fail_msg("json value round trip changed:\n%s", compact.c_str());
    }
  }
}

void test_written_text(void** state) {
  (void)state;
  assert_string_equal(tft::checkpoint_config_to_yaml(CheckpointConfig::uniform(2)).c_str(),
                      "strategy: uniform\n"
                      "interval: 2\n"
                      "checkpoint_attention: true\n"
                      "checkpoint_ffn: true\n"
                      "min_checkpoint_interval: 1\n");
  assert_string_equal(tft::checkpoint_config_to_yaml(CheckpointConfig::selective({0, 3})).c_str(),
                      "strategy: selective\n"
                      "layers: [0, 3]\n"
                      "checkpoint_attention: true\n"
                      "checkpoint_ffn: true\n"
                      "min_checkpoint_interval: 1\n");
  assert_string_equal(tft::checkpoint_config_to_yaml(CheckpointConfig::dynamic(6, 0.3)).c_str(),
                      "strategy: dynamic\n"
                      "num_layers: 6\n"
                      "memory_fraction: 0.3\n"
                      "checkpoint_attention: true\n"
                      "checkpoint_ffn: true\n"
                      "min_checkpoint_interval: 1\n");
  // 1.0 stays a float in YAML, not the integer 1.
  const std::string whole = tft::checkpoint_config_to_yaml(CheckpointConfig::dynamic(6, 1.0));
  assert_non_null(std::strstr(whole.c_str(), "memory_fraction: 1.0\n"));
  assert_string_equal(tft::checkpoint_config_to_yaml(CheckpointConfig::none()).c_str(),
                      "strategy: none\n"
                      "checkpoint_attention: false\n"
                      "checkpoint_ffn: false\n"
                      "min_checkpoint_interval: 1\n");
  assert_string_equal(
      tft::checkpoint_config_to_json_string(CheckpointConfig::uniform(2), -1).c_str(),
      "{\"checkpoint_attention\":true,\"checkpoint_ffn\":true,\"interval\":2,"
      "\"min_checkpoint_interval\":1,\"strategy\":\"uniform\"}");
  // boundary_dtype is written only when it is not the default float32 (old texts stay as
  // they were), and reads back either way.
  assert_string_equal(
      tft::checkpoint_config_to_yaml(
          CheckpointConfig::uniform(1).with_boundary_dtype(tft::BoundaryDtype::kInt8))
          .c_str(),
      "strategy: uniform\n"
      "interval: 1\n"
      "checkpoint_attention: true\n"
      "checkpoint_ffn: true\n"
      "min_checkpoint_interval: 1\n"
      "boundary_dtype: int8\n");
  assert_string_equal(
      tft::checkpoint_config_to_json_string(
          CheckpointConfig::uniform(2).with_boundary_dtype(tft::BoundaryDtype::kBFloat16), -1)
          .c_str(),
      "{\"boundary_dtype\":\"bfloat16\",\"checkpoint_attention\":true,\"checkpoint_ffn\":true,"
      "\"interval\":2,\"min_checkpoint_interval\":1,\"strategy\":\"uniform\"}");
  assert_true(yaml_ok("strategy: uniform\ninterval: 1\nboundary_dtype: float32\n") ==
              CheckpointConfig::uniform(1));
  const nlohmann::json j = tft::checkpoint_config_to_json(CheckpointConfig::dynamic(6, 0.3));
  assert_string_equal(j.at("strategy").get<std::string>().c_str(), "dynamic");
  assert_int_equal(j.at("num_layers").get<int>(), 6);
  assert_true(j.at("memory_fraction").get<double>() == 0.3);
  assert_false(j.contains("interval"));
  assert_false(j.contains("layers"));
}

void test_defaults_of_missing_keys(void** state) {
  (void)state;
  // Strategy constructors' defaults: flags true, min interval 1.
  assert_true(yaml_ok("strategy: uniform\ninterval: 3\n") == CheckpointConfig::uniform(3));
  assert_true(yaml_ok("strategy: selective\nlayers: [1, 4]\n") ==
              CheckpointConfig::selective({1, 4}));
  assert_true(yaml_ok("strategy: dynamic\nnum_layers: 6\nmemory_fraction: 0.3\n") ==
              CheckpointConfig::dynamic(6, 0.3));
  // none: flags false; a missing strategy is none.
  assert_true(yaml_ok("strategy: none\n") == CheckpointConfig::none());
  assert_true(yaml_ok("{}\n") == CheckpointConfig::none());
  assert_true(json_ok("{}") == CheckpointConfig::none());
  assert_true(yaml_ok("checkpoint_ffn: true\n") ==
              CheckpointConfig::none().with_checkpoint_ffn(true));
  // Explicit values override.
  assert_true(yaml_ok("strategy: uniform\ninterval: 2\ncheckpoint_attention: false\n"
                      "min_checkpoint_interval: 5\n") ==
              CheckpointConfig::uniform(2).with_checkpoint_attention(false).with_min_interval(5));
  // Block sequences, integer fractions, YAML 1.2 spellings of booleans.
  assert_true(yaml_ok("strategy: selective\nlayers:\n  - 0\n  - 2\n") ==
              CheckpointConfig::selective({0, 2}));
  assert_true(yaml_ok("strategy: dynamic\nnum_layers: 4\nmemory_fraction: 1\n") ==
              CheckpointConfig::dynamic(4, 1.0));
  assert_true(yaml_ok("strategy: uniform\ninterval: 2\ncheckpoint_ffn: False\n") ==
              CheckpointConfig::uniform(2).with_checkpoint_ffn(false));
  assert_true(yaml_ok("{strategy: uniform, interval: 4}") == CheckpointConfig::uniform(4));
  // JSON built in code holds signed integers; they are accepted when not negative.
  const nlohmann::json j = {{"strategy", "uniform"}, {"interval", 2}};
  assert_true(tft::checkpoint_config_from_json(j) == CheckpointConfig::uniform(2));
  assert_true(json_ok("{\"strategy\":\"dynamic\",\"num_layers\":6,\"memory_fraction\":0}") ==
              CheckpointConfig::dynamic(6, 0.0));
}

void test_unit_names(void** state) {
  (void)state;
  assert_true(yaml_ok("strategy: selective\nlayers: [static_encoder, 3, attention_0]\n", &kUnits) ==
              CheckpointConfig::selective({0, 3, 5}));
  assert_true(yaml_ok("strategy: selective\nlayers:\n  - lstm_encoder\n  - lstm_decoder\n",
                      &kUnits) == CheckpointConfig::selective({3, 4}));
  assert_true(json_ok("{\"strategy\":\"selective\",\"layers\":[\"future_encoder\",0]}", &kUnits) ==
              CheckpointConfig::selective({2, 0}));
  // Indices in range still work with a unit list; other strategies ignore it.
  assert_true(yaml_ok("strategy: selective\nlayers: [5]\n", &kUnits) ==
              CheckpointConfig::selective({5}));
  assert_true(yaml_ok("strategy: uniform\ninterval: 10\n", &kUnits) ==
              CheckpointConfig::uniform(10));
  // Names are written back as indices.
  const CheckpointConfig named =
      yaml_ok("strategy: selective\nlayers: [lstm_decoder, attention_0]\n", &kUnits);
  assert_true(yaml_ok(tft::checkpoint_config_to_yaml(named)) == named);
}

void test_yaml_node_section(void** state) {
  (void)state;
  // A bigger file: lines are those of the whole file, and the context names it.
  const YAML::Node root = YAML::Load(
      "model:\n"
      "  hidden: 16\n"
      "checkpoint:\n"
      "  strategy: selective\n"
      "  layers: [lstm_encoder, 5]\n");
  const CheckpointConfig c =
      tft::checkpoint_config_from_yaml_node(root["checkpoint"], "train.yaml", &kUnits);
  assert_true(c == CheckpointConfig::selective({3, 5}));

  const YAML::Node bad = YAML::Load(
      "model:\n"
      "  hidden: 16\n"
      "checkpoint:\n"
      "  strategy: uniform\n"
      "  intervall: 2\n");
  expect_config_error(
      [&] {
        (void)tft::checkpoint_config_from_yaml_node(bad["checkpoint"], "train.yaml", nullptr);
      },
      "train.yaml:5: checkpoint: unknown key 'intervall' (expected one of: strategy, interval, "
      "layers, num_layers, memory_fraction, checkpoint_attention, checkpoint_ffn, "
      "min_checkpoint_interval, boundary_dtype, memory_budget, chunk_every_unit)",
      "section with context");
  expect_config_error(
      [&] { (void)tft::checkpoint_config_from_yaml_node(bad["checkpoint"], "", nullptr); },
      "line 5: checkpoint: unknown key 'intervall'", "section without context");
  expect_config_error(
      [&] { (void)tft::checkpoint_config_from_yaml_node(bad["missing"], "train.yaml", nullptr); },
      "train.yaml: checkpoint: expected a mapping, got nothing", "missing section");
}

struct BadInput {
  const char* label;
  bool json;
  bool with_units;
  const char* text;
  const char* expected;
};

const BadInput kBadInputs[] = {
    {"unknown key", false, false, "strategy: uniform\ninterval: 2\nintervall: 3\n",
     "line 3: checkpoint: unknown key 'intervall' (expected one of: strategy, interval, layers, "
     "num_layers, memory_fraction, checkpoint_attention, checkpoint_ffn, "
     "min_checkpoint_interval, boundary_dtype, memory_budget, chunk_every_unit)"},
    {"unknown key in flow map", false, false, "{strategy: uniform, interval: 2, bogus: 1}\n",
     "line 1: checkpoint: unknown key 'bogus'"},
    {"wrong type", false, false, "strategy: uniform\ninterval: two\n",
     "line 2: checkpoint.interval: expected a non-negative integer, got \"two\""},
    {"quoted number", false, false, "strategy: uniform\ninterval: \"2\"\n",
     "line 2: checkpoint.interval: expected a non-negative integer, got \"2\""},
    {"float for integer", false, false, "strategy: uniform\ninterval: 2.5\n",
     "line 2: checkpoint.interval: expected a non-negative integer, got 2.5"},
    {"empty value", false, false, "strategy: uniform\ninterval:\n",
     "line 2: checkpoint.interval: expected a non-negative integer, got null"},
    {"negative number", false, false, "strategy: uniform\ninterval: -1\n",
     "line 2: checkpoint.interval: expected a non-negative integer, got -1"},
    {"negative min interval", false, false, "strategy: none\nmin_checkpoint_interval: -3\n",
     "line 2: checkpoint.min_checkpoint_interval: expected a non-negative integer, got -3"},
    {"negative layer", false, false, "strategy: selective\nlayers: [0, -1]\n",
     "line 2: checkpoint.layers[1]: expected a non-negative integer or a unit name, got -1"},
    {"too large", false, false, "strategy: uniform\ninterval: 99999999999999999999999\n",
     "line 2: checkpoint.interval: integer 99999999999999999999999 is too large"},
    {"negative beyond int64", false, false,
     "strategy: uniform\ninterval: -99999999999999999999999\n",
     "line 2: checkpoint.interval: expected a non-negative integer, got -99999999999999999999999"},
    {"negative layer beyond int64", false, false,
     "strategy: selective\nlayers: [-9223372036854775809]\n",
     "line 2: checkpoint.layers[0]: expected a non-negative integer or a unit name, got "
     "-9223372036854775809"},
    {"layers with uniform", false, false, "strategy: uniform\ninterval: 2\nlayers: [0, 1]\n",
     "line 3: checkpoint.layers: not used by strategy 'uniform' (it belongs to 'selective')"},
    {"interval with dynamic", false, false,
     "strategy: dynamic\nnum_layers: 6\nmemory_fraction: 0.5\ninterval: 2\n",
     "line 4: checkpoint.interval: not used by strategy 'dynamic' (it belongs to 'uniform')"},
    {"interval without strategy", false, false, "interval: 2\n",
     "line 1: checkpoint.interval: not used by strategy 'none' (it belongs to 'uniform')"},
    {"strategy misspelled", false, false, "strategy: uniformm\n",
     "line 1: checkpoint.strategy: unknown strategy 'uniformm' (expected one of: none, uniform, "
     "selective, dynamic)"},
    {"strategy not a string", false, false, "strategy: [uniform]\n",
     "line 1: checkpoint.strategy: expected a strategy name (one of: none, uniform, selective, "
     "dynamic), got a sequence"},
    {"duplicate layers", false, false, "strategy: selective\nlayers: [0, 3, 0]\n",
     "line 2: checkpoint.layers: duplicate index 0"},
    {"layers not a sequence", false, false, "strategy: selective\nlayers: 3\n",
     "line 2: checkpoint.layers: expected a sequence of unit indices or names, got 3"},
    {"fraction 1.5", false, false, "strategy: dynamic\nnum_layers: 6\nmemory_fraction: 1.5\n",
     "line 3: checkpoint.memory_fraction: must be a finite number in [0, 1] (got 1.5)"},
    {"fraction .nan", false, false, "strategy: dynamic\nnum_layers: 6\nmemory_fraction: .nan\n",
     "line 3: checkpoint.memory_fraction: must be a finite number in [0, 1] (got nan)"},
    {"fraction -.inf", false, false, "strategy: dynamic\nnum_layers: 6\nmemory_fraction: -.inf\n",
     "line 3: checkpoint.memory_fraction: must be a finite number in [0, 1] (got -inf)"},
    {"fraction not a number", false, false,
     "strategy: dynamic\nnum_layers: 6\nmemory_fraction: high\n",
     "line 3: checkpoint.memory_fraction: expected a number, got \"high\""},
    {"zero layers", false, false, "strategy: dynamic\nnum_layers: 0\nmemory_fraction: 0.5\n",
     "line 2: checkpoint.num_layers: must be at least 1 (got 0)"},
    {"interval 0", false, false, "strategy: uniform\ninterval: 0\n",
     "line 2: checkpoint.interval: must be at least 1 (got 0)"},
    {"min interval 0", false, false, "strategy: none\nmin_checkpoint_interval: 0\n",
     "line 2: checkpoint.min_checkpoint_interval: must be at least 1 (got 0)"},
    {"missing interval", false, false, "strategy: uniform\ncheckpoint_ffn: false\n",
     "line 1: checkpoint: strategy 'uniform' requires key 'interval'"},
    {"missing layers", false, false, "strategy: selective\n",
     "line 1: checkpoint: strategy 'selective' requires key 'layers'"},
    {"missing num_layers", false, false, "strategy: dynamic\nmemory_fraction: 0.5\n",
     "line 1: checkpoint: strategy 'dynamic' requires key 'num_layers'"},
    {"missing memory_fraction", false, false, "strategy: dynamic\nnum_layers: 6\n",
     "line 1: checkpoint: strategy 'dynamic' requires key 'memory_fraction'"},
    {"bool spelled yes", false, false, "strategy: uniform\ninterval: 2\ncheckpoint_ffn: yes\n",
     "line 3: checkpoint.checkpoint_ffn: expected true or false, got \"yes\""},
    {"bool as number", false, false, "strategy: none\ncheckpoint_attention: 1\n",
     "line 2: checkpoint.checkpoint_attention: expected true or false, got 1"},
    {"duplicate key", false, false, "strategy: none\nstrategy: uniform\n",
     "line 2: checkpoint: duplicate key 'strategy'"},
    {"sequence document", false, false, "- 1\n- 2\n",
     "line 1: checkpoint: expected a mapping, got a sequence"},
    {"scalar document", false, false, "uniform\n",
     "line 1: checkpoint: expected a mapping, got \"uniform\""},
    {"empty document", false, false, "", "checkpoint: expected a mapping, got an empty document"},
    {"comment-only document", false, false, "# nothing here\n",
     "checkpoint: expected a mapping, got an empty document"},
    {"YAML syntax error", false, false, "strategy: uniform\n  interval: 2\n",
     "line 2: checkpoint: invalid YAML: illegal map value"},
    {"YAML unclosed flow", false, false, "strategy: selective\nlayers: [1, 2\n",
     "line 3: checkpoint: invalid YAML: end of sequence flow not found"},
    {"name without unit list", false, false, "strategy: selective\nlayers: [lstm_encoder]\n",
     "line 2: checkpoint.layers[0]: 'lstm_encoder' is a unit name, and names need the model's "
     "unit list"},
    {"unknown unit name", false, true, "strategy: selective\nlayers:\n  - 0\n  - attn_0\n",
     "line 4: checkpoint.layers[1]: unknown unit 'attn_0' (expected one of: static_encoder, "
     "historical_encoder, future_encoder, lstm_encoder, lstm_decoder, attention_0)"},
    {"index out of range", false, true, "strategy: selective\nlayers: [0, 9]\n",
     "line 2: checkpoint.layers: index 9 is out of range for 6 units"},
    {"name twice", false, true, "strategy: selective\nlayers: [lstm_encoder, 3]\n",
     "line 2: checkpoint.layers: duplicate index 3"},
    {"JSON wrong type", true, false, "{\"strategy\": \"uniform\", \"interval\": \"2\"}",
     "checkpoint.interval: expected a non-negative integer, got \"2\""},
    {"JSON float for integer", true, false, "{\"strategy\": \"uniform\", \"interval\": 2.0}",
     "checkpoint.interval: expected a non-negative integer, got 2.0"},
    {"JSON negative", true, false, "{\"strategy\": \"uniform\", \"interval\": -2}",
     "checkpoint.interval: expected a non-negative integer, got -2"},
    {"JSON unknown key", true, false, "{\"strategy\": \"uniform\", \"interval\": 2, \"foo\": 1}",
     "checkpoint: unknown key 'foo' (expected one of: strategy, interval, layers, num_layers, "
     "memory_fraction, checkpoint_attention, checkpoint_ffn, min_checkpoint_interval, "
     "boundary_dtype, memory_budget, chunk_every_unit)"},
    {"unknown boundary dtype", false, false,
     "strategy: uniform\ninterval: 1\nboundary_dtype: fp8\n",
     "line 3: checkpoint.boundary_dtype: unknown boundary dtype \"fp8\" (expected one of: "
     "float32, bfloat16 or int8)"},
    {"boundary dtype spelled bf16", false, false, "boundary_dtype: bf16\n",
     "line 1: checkpoint.boundary_dtype: unknown boundary dtype \"bf16\""},
    {"boundary dtype as number", false, false, "strategy: none\nboundary_dtype: 8\n",
     "line 2: checkpoint.boundary_dtype: expected one of: float32, bfloat16 or int8, got 8"},
    {"JSON boundary dtype null", true, false, "{\"boundary_dtype\": null}",
     "checkpoint.boundary_dtype: expected one of: float32, bfloat16 or int8, got null"},
    {"JSON not an object", true, false, "[1, 2]", "checkpoint: expected an object, got an array"},
    {"JSON syntax error", true, false, "{\"strategy\": \"uniform\",",
     "checkpoint: invalid JSON: parse error at line 1, column 24"},
    // Found by fuzz_checkpoint_json: nlohmann's parser throws out_of_range, not parse_error,
    // for a number beyond a double's range, and it escaped the reader as a non-ConfigError.
    {"JSON number overflow", true, false, "1e380",
     "checkpoint: invalid JSON: number overflow parsing '1e380'"},
    {"JSON number overflow in a value", true, false,
     "{\"strategy\": \"dynamic\", \"num_layers\": 6, \"memory_fraction\": -1e400}",
     "checkpoint: invalid JSON: number overflow parsing '-1e400'"},
    {"JSON null fraction", true, false,
     "{\"strategy\": \"dynamic\", \"num_layers\": 6, \"memory_fraction\": null}",
     "checkpoint.memory_fraction: expected a number, got null"},
    {"JSON fraction 1.5", true, false,
     "{\"strategy\": \"dynamic\", \"num_layers\": 6, \"memory_fraction\": 1.5}",
     "checkpoint.memory_fraction: must be a finite number in [0, 1] (got 1.5)"},
    {"JSON layers with none", true, false, "{\"layers\": [0]}",
     "checkpoint.layers: not used by strategy 'none' (it belongs to 'selective')"},
    {"JSON bool as string", true, false, "{\"checkpoint_ffn\": \"true\"}",
     "checkpoint.checkpoint_ffn: expected true or false, got \"true\""},
    {"JSON name without unit list", true, false,
     "{\"strategy\": \"selective\", \"layers\": [\"lstm_encoder\"]}",
     "checkpoint.layers[0]: 'lstm_encoder' is a unit name, and names need the model's unit list"},
    {"JSON unknown unit", true, true, "{\"strategy\": \"selective\", \"layers\": [\"lstm\"]}",
     "checkpoint.layers[0]: unknown unit 'lstm' (expected one of: static_encoder,"},
};

void test_bad_inputs(void** state) {
  (void)state;
  size_t count = 0;
  for (const BadInput& bad : kBadInputs) {
    const tft::UnitNames* units = bad.with_units ? &kUnits : nullptr;
    const std::string text = bad.text;
    if (bad.json) {
      expect_config_error([&] { (void)tft::checkpoint_config_from_json_string(text, units); },
                          bad.expected, bad.label);
    } else {
      expect_config_error([&] { (void)tft::checkpoint_config_from_yaml(text, units); },
                          bad.expected, bad.label);
    }
    ++count;
  }
  assert_true(count >= 15);
  print_message("%zu bad inputs checked\n", count);
}

// Messages from JSON carry no line: JSON has no marks to give.
void test_json_messages_have_no_line(void** state) {
  (void)state;
  try {
    (void)tft::checkpoint_config_from_json_string("{\"strategy\": \"uniformm\"}");
    fail_msg("no error");
  } catch (const tft::ConfigError& e) {
    assert_string_equal(e.what(),
                        "checkpoint.strategy: unknown strategy 'uniformm' (expected one of: "
                        "none, uniform, selective, dynamic)");
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yaml_round_trip), cmocka_unit_test(test_json_round_trip),
      cmocka_unit_test(test_written_text),    cmocka_unit_test(test_defaults_of_missing_keys),
      cmocka_unit_test(test_unit_names),      cmocka_unit_test(test_yaml_node_section),
      cmocka_unit_test(test_bad_inputs),      cmocka_unit_test(test_json_messages_have_no_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
