// CheckpointConfig <-> YAML and JSON text. One schema for both formats, the same keys a
// training config's `checkpoint:` section uses:
//
//   strategy: none | uniform | selective | dynamic     (missing: none)
//   interval: 2                  uniform only, required
//   layers: [0, 3]               selective only, required; indices or unit names
//   num_layers: 6                dynamic only, required
//   memory_fraction: 0.3         dynamic only, required
//   checkpoint_attention: true   any strategy; default as that strategy's constructor
//   checkpoint_ffn: true         (true for uniform/selective/dynamic, false for none)
//   min_checkpoint_interval: 1   any strategy; default 1
//   boundary_dtype: int8         any strategy: float32 (default), bfloat16 or int8
//   memory_budget: 900MiB        strategy none only (memory_budget.h): the planner's budget;
//                                then checkpoint_attention and checkpoint_ffn default to true
//
// Strict on purpose, because a typo in a memory setting fails silently at run time
// otherwise: unknown keys, keys of another strategy, wrong types, negative or quoted numbers
// are errors, and the result passes CheckpointConfig::validate(). Every error is a
// tft::ConfigError whose message names the key, the rule and the value; YAML messages start
// with the 1-based line ("line 3: checkpoint: unknown key 'intervall' ...").
//
// Writing always emits indices (names are resolved when reading) and every key, so the text
// reads back to an equal config; boundary_dtype only when it is not float32 and memory_budget
// only when there is one, so a config without them writes the same text as before the keys
// existed. JSON
// (nlohmann::json) lives in checkpoint_config_json.h and YAML nodes in
// checkpoint_config_yaml_node.h, so this header pulls in neither library.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/checkpoint_config.h"

namespace tft {

// The model's unit names in forward order (index i names unit i). When a loader passes
// them, `layers` may name units, and selective indices are checked against their count.
using UnitNames = std::vector<std::string>;

// YAML text of the config (block mapping, `layers` as a flow sequence).
std::string checkpoint_config_to_yaml(const CheckpointConfig& config);

// Parses a YAML document whose root is the checkpoint mapping. `units` may be null.
CheckpointConfig checkpoint_config_from_yaml(const std::string& text,
                                             const UnitNames* units = nullptr);

// JSON text of the config; `indent` < 0 gives one line (nlohmann's dump convention).
std::string checkpoint_config_to_json_string(const CheckpointConfig& config, int indent = 2);

// Parses a JSON document whose root is the checkpoint object. `units` may be null.
CheckpointConfig checkpoint_config_from_json_string(const std::string& text,
                                                    const UnitNames* units = nullptr);

}  // namespace tft
