// What the two CheckpointConfig targets (YAML and JSON) share. Each reader is run without unit
// names and with a model's (where `layers` may name units), and checked, besides the
// sanitizers, for its contract (checkpoint_config_io.h): any text either loads or is rejected
// with a tft::ConfigError, and a loaded config reads back equal from the YAML and from the
// JSON it writes.
#pragma once

#include <string>

#include "checkpoint/checkpoint_config.h"
#include "checkpoint/checkpoint_config_io.h"
#include "common/error.h"
#include "fuzz_support.h"
#include "model/model_config.h"

namespace tft::fuzz {

// The units of a model with two attention blocks: seven, attention_0 and attention_1 last.
inline const UnitNames& two_layer_model_units() {
  static const UnitNames units = [] {
    ModelConfig model;
    model.decoder_layers = 2;
    return model.unit_names();
  }();
  return units;
}

// `text`, written by a loaded `config` in `format`, must read back as `config`.
template <typename Read>
void expect_reads_back(const CheckpointConfig& config, const std::string& text, const char* format,
                       const Read& read) {
  CheckpointConfig again;
  try {
    again = read(text);
  } catch (const Error& e) {
    broken_contract(std::string("the ") + format + " a loaded checkpoint config writes does " +
                    "not load: " + e.what() + "\n" + text);
  }
  if (!(again == config)) {
    broken_contract(std::string("the ") + format + " a loaded checkpoint config writes loads " +
                    "as another config:\n" + text);
  }
}

// Runs `read(text, units)` (checkpoint_config_from_yaml or _from_json_string) on the fuzz input
// with and without unit names, and checks what loads.
template <typename Read>
void fuzz_checkpoint_reader(const std::string& input, const Read& read) {
  for (const UnitNames* units :
       {static_cast<const UnitNames*>(nullptr), &two_layer_model_units()}) {
    CheckpointConfig config;
    try {
      config = read(input, units);
    } catch (const ConfigError&) {
      continue;  // rejected with a message: the reader's job
    }
    expect_reads_back(
        config, checkpoint_config_to_yaml(config), "YAML",
        [&](const std::string& text) { return checkpoint_config_from_yaml(text, units); });
    expect_reads_back(
        config, checkpoint_config_to_json_string(config), "JSON",
        [&](const std::string& text) { return checkpoint_config_from_json_string(text, units); });
  }
}

}  // namespace tft::fuzz
