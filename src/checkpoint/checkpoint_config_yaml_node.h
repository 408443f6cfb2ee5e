// Parsing a CheckpointConfig from an already loaded YAML node, for loaders that read a bigger
// file (TrainConfig's `checkpoint:` section): line numbers stay those of that file.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "checkpoint/checkpoint_config_io.h"

namespace tft {

// Same schema and rules as checkpoint_config_from_yaml (checkpoint_config_io.h). `context`
// prefixes every message: with "train.yaml" they read "train.yaml:12: checkpoint.interval:
// ...", with "" they read "line 12: checkpoint.interval: ...". `units` may be null.
CheckpointConfig checkpoint_config_from_yaml_node(const YAML::Node& node,
                                                  const std::string& context,
                                                  const UnitNames* units);

}  // namespace tft
