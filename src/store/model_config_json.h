// ModelConfig <-> JSON, for the saved model's model_config.json (src/model has no serializer
// of its own). Every field, the input schema included, so the file alone rebuilds the model:
//
//   {"format": "tftrain-model-config", "version": 1,
//    "hidden_size": 16, "attention_heads": 4, "dropout": 0.1, "lstm_layers": 1,
//    "decoder_layers": 1, "quantiles": [0.1, 0.5, 0.9], "encoder_length": 60,
//    "prediction_length": 5, "unit_chunks": {"lstm_encoder": 4},
//    "schema": {"target": "close", "static_reals": [], "static_categoricals": [],
//               "known_reals": [...], "unknown_reals": [...],
//               "known_categoricals": [{"name": "month", "cardinality": 13,
//                                       "embedding_dim": 0}], "unknown_categoricals": []}}
#pragma once

#include <nlohmann/json.hpp>

#include "model/model_config.h"

namespace tft {

nlohmann::ordered_json model_config_to_json(const ModelConfig& config);

// IoError naming the key when the JSON is not such an object; the result is validated
// (ConfigError when it breaks a rule of ModelConfig::validate()).
ModelConfig model_config_from_json(const nlohmann::json& json);

}  // namespace tft
