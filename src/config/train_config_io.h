// TrainConfig <-> YAML text, and get/set of one value by dotted key (for the C API).
//
// The schema, every key with its type and default, is in docs/config.md. Strict on purpose:
// unknown keys, duplicate keys, wrong types and quoted numbers are errors, and a loaded config
// has passed TrainConfig::validate(). Every error is a tft::ConfigError that names the file,
// the line and the dotted key:
//   sp500.yaml:12: training.epochs: expected a positive integer, got "ten"
//   sp500.yaml:3: training: unknown key 'epoch' (expected one of: epochs, batch_size, ...)
//   sp500.yaml:8: windows.stride: must be at least 1 (got 0)
// (text loaded without a file name reads "line 12: ..."). The `checkpoint:` section is read
// by checkpoint_config_from_yaml_node (its own schema and messages; unit names allowed).
//
// Relative paths (data.path, output.directory) resolve against the YAML file's folder, or the
// `base_dir` given with text; TrainConfig::base_dir records that folder.
#pragma once

#include <string>

#include "config/train_config.h"

namespace tft {

// Reads and validates a YAML file. IoError when it cannot be read, ConfigError otherwise.
TrainConfig load_train_config_file(const std::string& path);

// Reads and validates YAML text; relative paths resolve against `base_dir` (left relative
// when it is empty).
TrainConfig load_train_config_string(const std::string& text, const std::string& base_dir = "");

// YAML text with every key (paths as stored, i.e. resolved); it loads back to an equal config
// when given the same base_dir (load_train_config_string(train_config_to_yaml(c), c.base_dir)).
std::string train_config_to_yaml(const TrainConfig& config);

// The value at `dotted_key` as YAML text: a scalar ("64", "0.001", "per_series"), a flow
// sequence ("[0.1, 0.5, 0.9]") or, for a section ("training.lr_schedule", "checkpoint"), a
// flow mapping. Keys: every key of the schema ("training.epochs", "data.known_reals"), every
// section, "model.unit_chunks.<unit>" and "checkpoint.<key>". An unset split key reads "null".
// ConfigError for an unknown key.
std::string get_config_value(const TrainConfig& config, const std::string& dotted_key);

// Parses `value_text` as a YAML value (scalar, flow sequence, or flow mapping for a section)
// and sets `dotted_key` with the loader's type rules and messages (without a line:
// "training.epochs: expected a positive integer, got \"ten\""). Only types are checked here;
// call validate() when done setting. On error the config is unchanged. Specials:
//   split.validation_fraction / split.validation_steps: setting one clears the other; null
//     clears the key;
//   model.unit_chunks.<unit>: null removes the entry;
//   checkpoint.<key>: edits the checkpoint section and re-reads it with its own rules, so a
//     strategy change needs the whole section: set "checkpoint" to
//     "{strategy: uniform, interval: 2}";
//   data.path, output.directory: relative values resolve against config.base_dir.
void set_config_value(TrainConfig& config, const std::string& dotted_key,
                      const std::string& value_text);

}  // namespace tft
