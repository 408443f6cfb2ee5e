#include "store/model_config_json.h"

#include "common/error.h"
#include "common/json_util.h"

namespace tft {

namespace {

constexpr const char* kConfigFormat = "tftrain-model-config";
constexpr int kConfigVersion = 1;

nlohmann::ordered_json categoricals_to_json(const std::vector<CategoricalVariable>& variables) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CategoricalVariable& v : variables) {
    nlohmann::ordered_json item;
    item["name"] = v.name;
    item["cardinality"] = v.cardinality;
    item["embedding_dim"] = v.embedding_dim;
    list.push_back(item);
  }
  return list;
}

std::vector<std::string> strings_from(const nlohmann::json& json, const std::string& key,
                                      const std::string& where) {
  const nlohmann::json& list = json_get(json, key, where);
  if (!list.is_array()) throw IoError(where + ": key '" + key + "': expected an array");
  std::vector<std::string> out;
  for (const nlohmann::json& item : list) {
    if (!item.is_string()) throw IoError(where + ": key '" + key + "': expected strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<CategoricalVariable> categoricals_from(const nlohmann::json& json,
                                                   const std::string& key,
                                                   const std::string& where) {
  const nlohmann::json& list = json_get(json, key, where);
  if (!list.is_array()) throw IoError(where + ": key '" + key + "': expected an array");
  std::vector<CategoricalVariable> out;
  for (const nlohmann::json& item : list) {
    const std::string at = where + "." + key;
    out.push_back({json_get_string(item, "name", at), json_get_int(item, "cardinality", at),
                   json_get_int(item, "embedding_dim", at)});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json model_config_to_json(const ModelConfig& c) {
  nlohmann::ordered_json j;
  j["format"] = kConfigFormat;
  j["version"] = kConfigVersion;
  j["hidden_size"] = c.hidden_size;
  j["attention_heads"] = c.attention_heads;
  j["dropout"] = c.dropout;
  // Only where it is on: a model without it is saved as it always was, and files without the
  // key read as 0.
  if (c.embedding_dropout != 0.0) j["embedding_dropout"] = c.embedding_dropout;
  j["lstm_layers"] = c.lstm_layers;
  j["decoder_layers"] = c.decoder_layers;
  j["quantiles"] = c.quantiles;
  j["encoder_length"] = c.encoder_length;
  j["prediction_length"] = c.prediction_length;
  nlohmann::ordered_json chunks = nlohmann::ordered_json::object();
  for (const auto& [unit, count] : c.unit_chunks) chunks[unit] = count;
  j["unit_chunks"] = chunks;
  if (c.quantization.enabled) {
    // Only a QAT model has the key (and quantizer buffers in model.pt); older readers of a
    // float model see the file they always saw.
    nlohmann::ordered_json quantization;
    quantization["weight_bits"] = c.quantization.weight_bits;
    quantization["activation_bits"] = c.quantization.activation_bits;
    j["quantization"] = quantization;
  }
  nlohmann::ordered_json schema;
  schema["target"] = c.schema.target;
  schema["static_reals"] = c.schema.static_reals;
  schema["static_categoricals"] = categoricals_to_json(c.schema.static_categoricals);
  schema["known_reals"] = c.schema.known_reals;
  schema["known_categoricals"] = categoricals_to_json(c.schema.known_categoricals);
  schema["unknown_reals"] = c.schema.unknown_reals;
  schema["unknown_categoricals"] = categoricals_to_json(c.schema.unknown_categoricals);
  j["schema"] = schema;
  return j;
}

ModelConfig model_config_from_json(const nlohmann::json& j) {
  const std::string where = "model_config.json";
  if (json_get_string(j, "format", where) != kConfigFormat) {
    throw IoError(where + ": key 'format': expected \"" + std::string(kConfigFormat) + "\"");
  }
  if (json_get_int(j, "version", where) != kConfigVersion) {
    throw IoError(where + ": key 'version': expected " + std::to_string(kConfigVersion));
  }
  ModelConfig c;
  c.hidden_size = json_get_int(j, "hidden_size", where);
  c.attention_heads = json_get_int(j, "attention_heads", where);
  c.dropout = json_get_number(j, "dropout", where);
  if (j.contains("embedding_dropout")) {
    c.embedding_dropout = json_get_number(j, "embedding_dropout", where);
  }
  c.lstm_layers = json_get_int(j, "lstm_layers", where);
  c.decoder_layers = json_get_int(j, "decoder_layers", where);
  const nlohmann::json& quantiles = json_get(j, "quantiles", where);
  if (!quantiles.is_array()) throw IoError(where + ": key 'quantiles': expected an array");
  c.quantiles.clear();
  for (const nlohmann::json& q : quantiles) {
    if (!q.is_number()) throw IoError(where + ": key 'quantiles': expected numbers");
    c.quantiles.push_back(q.get<double>());
  }
  c.encoder_length = json_get_int(j, "encoder_length", where);
  c.prediction_length = json_get_int(j, "prediction_length", where);
  const nlohmann::json& chunks = json_get(j, "unit_chunks", where);
  if (!chunks.is_object()) throw IoError(where + ": key 'unit_chunks': expected an object");
  for (const auto& [unit, count] : chunks.items()) {
    if (!count.is_number_integer()) {
      throw IoError(where + ": unit_chunks." + unit + ": expected an integer");
    }
    c.unit_chunks[unit] = count.get<std::int64_t>();
  }
  if (j.contains("quantization")) {
    const nlohmann::json& q = json_get(j, "quantization", where);
    if (!q.is_object()) throw IoError(where + ": key 'quantization': expected an object");
    c.quantization.enabled = true;
    c.quantization.weight_bits = json_get_int(q, "weight_bits", where + ": quantization");
    c.quantization.activation_bits = json_get_int(q, "activation_bits", where + ": quantization");
  }
  const nlohmann::json& s = json_get(j, "schema", where);
  const std::string at = where + ": schema";
  c.schema.target = json_get_string(s, "target", at);
  c.schema.static_reals = strings_from(s, "static_reals", at);
  c.schema.static_categoricals = categoricals_from(s, "static_categoricals", at);
  c.schema.known_reals = strings_from(s, "known_reals", at);
  c.schema.known_categoricals = categoricals_from(s, "known_categoricals", at);
  c.schema.unknown_reals = strings_from(s, "unknown_reals", at);
  c.schema.unknown_categoricals = categoricals_from(s, "unknown_categoricals", at);
  c.validate();
  return c;
}

}  // namespace tft
