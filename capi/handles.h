// The handle structs the C API hands out, where more than one entry-point file needs them.
// Each names its type (kMagic, kTypeName) for the registry of live handles (api_guard.h).
#pragma once

#include "api_guard.h"

#include "checkpoint/checkpoint_config.h"
#include "config/train_config.h"

struct tft_checkpoint_config {
  static constexpr std::uint64_t kMagic = 0x7466746370636667ULL;  // "tftcpcfg"
  static constexpr const char* kTypeName = "tft_checkpoint_config";
  tft::CheckpointConfig config;
};

struct tft_config {
  static constexpr std::uint64_t kMagic = 0x74667463666731ULL;  // "tftcfg1"
  static constexpr const char* kTypeName = "tft_config";
  tft::TrainConfig config;
};
