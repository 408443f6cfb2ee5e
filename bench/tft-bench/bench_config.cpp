#include "bench_config.h"

#include "common/error.h"
#include "config/yaml_value.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace tft::bench {
namespace {

using config_detail::YamlValue;

const YamlValue* find(const YamlValue& map, const std::string& key) {
  for (const auto& entry : map.entries) {
    if (entry.key == key) return &entry.value;
  }
  return nullptr;
}

// Fails on a key of `map` that is not in `allowed`.
void reject_unknown(const YamlValue& map, const std::string& section,
                    const std::vector<std::string>& allowed) {
  for (const auto& entry : map.entries) {
    const std::string& key = entry.key;
    bool known = false;
    for (const auto& a : allowed) known = known || a == key;
    if (!known) {
      config_detail::fail_at(entry.where, section.empty() ? key : section + "." + key,
                             "unknown key");
    }
  }
}

const YamlValue& require_map(const YamlValue* v, const std::string& where, const std::string& key) {
  if (v == nullptr) config_detail::fail_at(where, key, "missing");
  if (v->kind != YamlValue::Kind::Map) config_detail::fail_at(v->where, key, "expected a mapping");
  return *v;
}

std::vector<std::int64_t> cardinalities(const YamlValue* v, const std::string& key) {
  std::vector<std::int64_t> out;
  if (v == nullptr) return out;
  if (v->kind != YamlValue::Kind::Seq) {
    config_detail::fail_at(v->where, key, "expected a list of cardinalities, got " + v->shown);
  }
  for (const auto& item : v->items) out.push_back(config_detail::as_positive_int(item, key));
  return out;
}

std::vector<CategoricalVariable> categoricals(const std::string& prefix,
                                              const std::vector<std::int64_t>& cards) {
  std::vector<CategoricalVariable> out;
  for (std::size_t i = 0; i < cards.size(); ++i) {
    out.push_back({prefix + std::to_string(i), cards[i], 0});
  }
  return out;
}

std::vector<std::string> reals(const std::string& prefix, std::int64_t count) {
  std::vector<std::string> out;
  for (std::int64_t i = 0; i < count; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

}  // namespace

BenchConfig load_bench_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError(path + ": cannot open the bench configuration");
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  const config_detail::YamlLocator locator{path, true};
  const YamlValue doc = config_detail::to_value(root, locator, "", path + ": ");
  if (doc.kind != YamlValue::Kind::Map)
    config_detail::fail_at(doc.where, "bench", "expected a mapping");
  reject_unknown(doc, "", {"model", "inputs", "batch_size", "training"});

  BenchConfig config;
  const YamlValue& model = require_map(find(doc, "model"), doc.where, "model");
  reject_unknown(model, "model",
                 {"hidden_size", "attention_heads", "dropout", "lstm_layers", "decoder_layers",
                  "encoder_length", "prediction_length", "quantiles", "unit_chunks"});
  ModelConfig& m = config.model;
  if (const auto* v = find(model, "hidden_size"))
    m.hidden_size = config_detail::as_positive_int(*v, "model.hidden_size");
  if (const auto* v = find(model, "attention_heads"))
    m.attention_heads = config_detail::as_positive_int(*v, "model.attention_heads");
  if (const auto* v = find(model, "dropout"))
    m.dropout = config_detail::as_number(*v, "model.dropout");
  if (const auto* v = find(model, "lstm_layers"))
    m.lstm_layers = config_detail::as_positive_int(*v, "model.lstm_layers");
  if (const auto* v = find(model, "decoder_layers"))
    m.decoder_layers = config_detail::as_positive_int(*v, "model.decoder_layers");
  if (const auto* v = find(model, "encoder_length"))
    m.encoder_length = config_detail::as_positive_int(*v, "model.encoder_length");
  if (const auto* v = find(model, "prediction_length"))
    m.prediction_length = config_detail::as_positive_int(*v, "model.prediction_length");
  if (const auto* v = find(model, "quantiles"))
    m.quantiles = config_detail::as_number_list(*v, "model.quantiles");
  if (const auto* v = find(model, "unit_chunks")) {
    const YamlValue& chunks = require_map(v, model.where, "model.unit_chunks");
    for (const auto& entry : chunks.entries) {
      m.unit_chunks[entry.key] =
          config_detail::as_positive_int(entry.value, "model.unit_chunks." + entry.key);
    }
  }

  const YamlValue& inputs = require_map(find(doc, "inputs"), doc.where, "inputs");
  reject_unknown(inputs, "inputs",
                 {"static_categoricals", "static_reals", "known_reals", "known_categoricals",
                  "unknown_reals", "unknown_categoricals"});
  auto count = [&](const char* key) -> std::int64_t {
    const auto* v = find(inputs, key);
    return v ? config_detail::as_non_negative_int(*v, std::string("inputs.") + key) : 0;
  };
  InputSchema& s = m.schema;
  s.static_categoricals = categoricals(
      "s_cat", cardinalities(find(inputs, "static_categoricals"), "inputs.static_categoricals"));
  s.static_reals = reals("s_real", count("static_reals"));
  s.known_reals = reals("known", count("known_reals"));
  s.known_categoricals = categoricals(
      "k_cat", cardinalities(find(inputs, "known_categoricals"), "inputs.known_categoricals"));
  s.unknown_reals = reals("unknown", count("unknown_reals"));
  s.unknown_categoricals = categoricals(
      "u_cat", cardinalities(find(inputs, "unknown_categoricals"), "inputs.unknown_categoricals"));
  s.target = "target";

  if (const auto* v = find(doc, "batch_size"))
    config.batch_size = config_detail::as_positive_int(*v, "batch_size");
  if (const auto* v = find(doc, "training")) {
    const YamlValue& training = require_map(v, doc.where, "training");
    reject_unknown(training, "training", {"precision"});
    if (const auto* p = find(training, "precision")) {
      // 32 (an integer, or "32" / Lightning's "32-true"), "bf16-mixed" or "16-mixed".
      config.precision =
          p->kind == YamlValue::Kind::UInt && p->uint == 32
              ? Precision::Float32
              : *precision_from_string(config_detail::as_choice(
                    *p, "training.precision", {"32", "32-true", "bf16-mixed", "16-mixed"}));
    }
  }
  m.validate();
  return config;
}

}  // namespace tft::bench
