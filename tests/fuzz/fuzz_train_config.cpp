// Fuzz target: the training configuration's YAML reader (load_train_config_string).
//
// Contract checked, besides the sanitizers: any text either loads or is rejected with a
// tft::ConfigError; a loaded config writes out YAML that loads back equal
// (train_config_to_yaml), and every section read with get_config_value sets back to the same
// config with set_config_value (the C API's get/set).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "config/train_config.h"
#include "config/train_config_io.h"
#include "fuzz_support.h"

namespace {

// Relative paths in the text resolve against this folder (never read: nothing opens data).
constexpr const char* kBaseDir = "/fuzz";

const char* const kSections[] = {"data",     "windows",    "split", "model",
                                 "training", "checkpoint", "output"};

void expect_yaml_round_trip(const tft::TrainConfig& config) {
  const std::string yaml = tft::train_config_to_yaml(config);
  tft::TrainConfig again;
  try {
    again = tft::load_train_config_string(yaml, config.base_dir);
  } catch (const tft::Error& e) {
    tft::fuzz::broken_contract(
        "the YAML a loaded config writes does not load: " + std::string(e.what()) + "\n" + yaml);
  }
  if (again != config) {
    tft::fuzz::broken_contract("the YAML a loaded config writes loads as another config:\n" + yaml);
  }
}

void expect_sections_set_back(const tft::TrainConfig& config) {
  for (const char* section : kSections) {
    const std::string value = tft::get_config_value(config, section);
    tft::TrainConfig updated = config;
    try {
      tft::set_config_value(updated, section, value);
    } catch (const tft::Error& e) {
      tft::fuzz::broken_contract(std::string("set_config_value(\"") + section +
                                 "\") rejects what get_config_value returned: " + e.what() + "\n" +
                                 value);
    }
    if (updated != config) {
      tft::fuzz::broken_contract(std::string("set_config_value(\"") + section +
                                 "\", get_config_value(...)) changed the config: " + value);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tft::TrainConfig config;
  try {
    config = tft::load_train_config_string(tft::fuzz::as_text(data, size), kBaseDir);
  } catch (const tft::ConfigError&) {
    return 0;  // rejected with a message: the loader's job
  }
  expect_yaml_round_trip(config);
  expect_sections_set_back(config);
  return 0;
}
