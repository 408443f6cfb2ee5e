// CheckpointConfig <-> nlohmann::json values, for callers that embed the config in a bigger
// JSON document (benchmark reports, the C API). Schema and rules: checkpoint_config_io.h.
#pragma once

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_config_io.h"

namespace tft {

// A JSON object with every key of the schema.
nlohmann::json checkpoint_config_to_json(const CheckpointConfig& config);

// Throws ConfigError when `value` is not a valid checkpoint object; JSON has no lines, so
// messages start with the key path ("checkpoint.interval: ..."). `units` may be null.
CheckpointConfig checkpoint_config_from_json(const nlohmann::json& value,
                                             const UnitNames* units = nullptr);

}  // namespace tft
