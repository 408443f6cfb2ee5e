// The --strategies list of tft-bench: "none,full,unit:lstm_encoder,uniform:2,selective:0,3,
// dynamic:0.3". Integers after selective: continue its list (so the list's commas can stay).
// A suffix +bf16 or +int8 keeps that strategy's checkpoint boundaries compressed
// ("full+int8", "selective:1,3+bf16": on the list's last index).
#pragma once

#include "checkpoint/checkpoint_config.h"

#include <string>
#include <vector>

namespace tft::bench {

struct StrategySpec {
  std::string label;        // as written, e.g. "selective:0,3"
  CheckpointConfig config;  // what the model runs with
};

// unit_names: the model's units in forward order (for unit:NAME and the range checks).
// Throws ConfigError naming the bad entry and what is accepted.
std::vector<StrategySpec> parse_strategies(const std::string& text,
                                           const std::vector<std::string>& unit_names);

}  // namespace tft::bench
