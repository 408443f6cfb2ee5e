// tft_checkpoint_config_*: tft::CheckpointConfig behind a handle.
#include "api_guard.h"
#include "handles.h"

#include "checkpoint/checkpoint_config_io.h"

#include <variant>
#include <vector>

namespace {

using tft::capi::live;
using tft::capi::require;

tft_status make(tft::CheckpointConfig config, tft_checkpoint_config** out) {
  auto handle = std::make_unique<tft_checkpoint_config>();
  handle->config = std::move(config);
  *out = tft::capi::publish(std::move(handle));
  return TFT_OK;
}

}  // namespace

extern "C" {

tft_status tft_checkpoint_config_create_uniform(size_t interval, tft_checkpoint_config** out) {
  TFT_API_BEGIN
  require(out, __func__, "out");
  return make(tft::CheckpointConfig::uniform(interval), out);
  TFT_API_END
}

tft_status tft_checkpoint_config_create_selective(const size_t* layers, size_t count,
                                                  tft_checkpoint_config** out) {
  TFT_API_BEGIN
  require(out, __func__, "out");
  if (count > 0) require(layers, __func__, "layers");
  std::vector<std::size_t> chosen(layers, layers + count);
  return make(tft::CheckpointConfig::selective(std::move(chosen)), out);
  TFT_API_END
}

tft_status tft_checkpoint_config_create_dynamic(size_t num_layers, double memory_fraction,
                                                tft_checkpoint_config** out) {
  TFT_API_BEGIN
  require(out, __func__, "out");
  return make(tft::CheckpointConfig::dynamic(num_layers, memory_fraction), out);
  TFT_API_END
}

tft_status tft_checkpoint_config_create_none(tft_checkpoint_config** out) {
  TFT_API_BEGIN
  require(out, __func__, "out");
  return make(tft::CheckpointConfig::none(), out);
  TFT_API_END
}

tft_status tft_checkpoint_config_clone(const tft_checkpoint_config* config,
                                       tft_checkpoint_config** out) {
  TFT_API_BEGIN
  const auto* source = live(config, __func__, "config");
  require(out, __func__, "out");
  return make(source->config, out);
  TFT_API_END
}

void tft_checkpoint_config_free(tft_checkpoint_config* config) { tft::capi::destroy(config); }

tft_status tft_checkpoint_config_set_checkpoint_attention(tft_checkpoint_config* config,
                                                          int enabled) {
  TFT_API_BEGIN
  live(config, __func__, "config")->config.checkpoint_attention = enabled != 0;
  TFT_API_END
}

tft_status tft_checkpoint_config_set_checkpoint_ffn(tft_checkpoint_config* config, int enabled) {
  TFT_API_BEGIN
  live(config, __func__, "config")->config.checkpoint_ffn = enabled != 0;
  TFT_API_END
}

tft_status tft_checkpoint_config_set_min_interval(tft_checkpoint_config* config, size_t interval) {
  TFT_API_BEGIN
  live(config, __func__, "config")->config.min_checkpoint_interval = interval;
  TFT_API_END
}

tft_status tft_checkpoint_config_get_strategy(const tft_checkpoint_config* config,
                                              tft_checkpoint_strategy* out) {
  TFT_API_BEGIN
  const auto& strategy = live(config, __func__, "config")->config.strategy;
  require(out, __func__, "out");
  // The variant's alternatives are declared in the enum's order.
  static_assert(
      std::is_same_v<std::variant_alternative_t<TFT_CHECKPOINT_DYNAMIC, tft::CheckpointStrategy>,
                     tft::DynamicStrategy>);
  *out = static_cast<tft_checkpoint_strategy>(strategy.index());
  TFT_API_END
}

tft_status tft_checkpoint_config_get_checkpoint_attention(const tft_checkpoint_config* config,
                                                          int* out) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(out, __func__, "out");
  *out = handle->config.checkpoint_attention ? 1 : 0;
  TFT_API_END
}

tft_status tft_checkpoint_config_get_checkpoint_ffn(const tft_checkpoint_config* config, int* out) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(out, __func__, "out");
  *out = handle->config.checkpoint_ffn ? 1 : 0;
  TFT_API_END
}

tft_status tft_checkpoint_config_get_min_interval(const tft_checkpoint_config* config,
                                                  size_t* out) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(out, __func__, "out");
  *out = handle->config.min_checkpoint_interval;
  TFT_API_END
}

tft_status tft_checkpoint_config_get_should_checkpoint(const tft_checkpoint_config* config,
                                                       size_t layer, int* out) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(out, __func__, "out");
  *out = handle->config.should_checkpoint(layer) ? 1 : 0;
  TFT_API_END
}

tft_status tft_checkpoint_config_get_memory_savings(const tft_checkpoint_config* config,
                                                    size_t num_layers, double* out) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(out, __func__, "out");
  *out = handle->config.memory_savings(num_layers);
  TFT_API_END
}

tft_status tft_checkpoint_config_get_compute_overhead(const tft_checkpoint_config* config,
                                                      size_t num_layers, double* out) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(out, __func__, "out");
  *out = handle->config.compute_overhead(num_layers);
  TFT_API_END
}

tft_status tft_checkpoint_config_validate(const tft_checkpoint_config* config) {
  TFT_API_BEGIN
  live(config, __func__, "config")->config.validate();
  TFT_API_END
}

tft_status tft_checkpoint_config_get_summary(const tft_checkpoint_config* config, char* buf,
                                             size_t len, size_t* needed) {
  TFT_API_BEGIN
  return tft::capi::copy_out(live(config, __func__, "config")->config.summary(), buf, len, needed,
                             __func__);
  TFT_API_END
}

tft_status tft_checkpoint_config_to_yaml(const tft_checkpoint_config* config, char* buf, size_t len,
                                         size_t* needed) {
  TFT_API_BEGIN
  return tft::capi::copy_out(
      tft::checkpoint_config_to_yaml(live(config, __func__, "config")->config), buf, len, needed,
      __func__);
  TFT_API_END
}

tft_status tft_checkpoint_config_to_json(const tft_checkpoint_config* config, char* buf, size_t len,
                                         size_t* needed) {
  TFT_API_BEGIN
  return tft::capi::copy_out(
      tft::checkpoint_config_to_json_string(live(config, __func__, "config")->config), buf, len,
      needed, __func__);
  TFT_API_END
}

tft_status tft_checkpoint_config_create_from_yaml(const char* yaml, tft_checkpoint_config** out) {
  TFT_API_BEGIN
  require(yaml, __func__, "yaml");
  require(out, __func__, "out");
  return make(tft::checkpoint_config_from_yaml(yaml), out);
  TFT_API_END
}

tft_status tft_checkpoint_config_create_from_json(const char* json, tft_checkpoint_config** out) {
  TFT_API_BEGIN
  require(json, __func__, "json");
  require(out, __func__, "out");
  return make(tft::checkpoint_config_from_json_string(json), out);
  TFT_API_END
}

}  // extern "C"
