// The training config's table of fields (internal to src/config): one entry per dotted key,
// with its getter (text that reads back to the same value) and its setter (type and range
// checks with the key's location). The YAML reader, the writer and get/set_config_value
// (train_config_io.cpp) all go through it, so keys, types and messages cannot drift apart.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/train_config.h"
#include "config/yaml_value.h"

namespace tft {
namespace config_detail {

// Where a setter is called from: the folder for relative paths.
struct SetContext {
  std::string base_dir;
};

struct Field {
  std::string key;  // dotted: "training.lr_schedule.factor"
  std::function<std::string(const TrainConfig&)> get;
  std::function<void(TrainConfig&, const YamlValue&, const std::string& key, const SetContext&)>
      set;
};

// The field table, in the order the writer emits keys.
const std::vector<Field>& fields();

// The root's sections in file order: data, windows, split, model, training, checkpoint,
// output.
const std::vector<std::string>& section_order();

// The field of a dotted key; null when there is none (a section, or no such key).
const Field* find_field(const std::string& key);

// Whether `prefix` is a section ("" the root, "training", "training.lr_schedule").
bool is_section(const std::string& prefix);

// The direct children of a section, in table order: "epochs", ..., "lr_schedule", ...
std::vector<std::string> children(const std::string& prefix);

// "prefix.name", or "name" at the root.
std::string child_key(const std::string& prefix, const std::string& name);

// A relative `path` resolved against `base_dir` (the config file's folder); unchanged when
// absolute or when either is empty.
std::string resolve_path(const std::string& path, const std::string& base_dir);

}  // namespace config_detail
}  // namespace tft
