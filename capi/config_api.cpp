// tft_config_*: the training configuration (TrainConfig) behind a handle. No LibTorch here.
#include "api_guard.h"
#include "handles.h"

#include "config/train_config_io.h"

using tft::capi::live;
using tft::capi::require;

namespace {

tft_status make(tft::TrainConfig config, tft_config** out) {
  auto handle = std::make_unique<tft_config>();
  handle->config = std::move(config);
  *out = tft::capi::publish(std::move(handle));
  return TFT_OK;
}

}  // namespace

extern "C" {

tft_status tft_config_create_from_file(const char* path, tft_config** out) {
  TFT_API_BEGIN
  require(path, __func__, "path");
  require(out, __func__, "out");
  return make(tft::load_train_config_file(path), out);
  TFT_API_END
}

tft_status tft_config_create_from_yaml(const char* yaml, tft_config** out) {
  TFT_API_BEGIN
  require(yaml, __func__, "yaml");
  require(out, __func__, "out");
  return make(tft::load_train_config_string(yaml), out);
  TFT_API_END
}

tft_status tft_config_clone(const tft_config* config, tft_config** out) {
  TFT_API_BEGIN
  const auto* source = live(config, __func__, "config");
  require(out, __func__, "out");
  return make(source->config, out);
  TFT_API_END
}

void tft_config_free(tft_config* config) { tft::capi::destroy(config); }

tft_status tft_config_get_value(const tft_config* config, const char* key, char* buf, size_t len,
                                size_t* needed) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(key, __func__, "key");
  return tft::capi::copy_out(tft::get_config_value(handle->config, key), buf, len, needed,
                             __func__);
  TFT_API_END
}

tft_status tft_config_set_value(tft_config* config, const char* key, const char* value) {
  TFT_API_BEGIN
  auto* handle = live(config, __func__, "config");
  require(key, __func__, "key");
  require(value, __func__, "value");
  tft::set_config_value(handle->config, key, value);
  TFT_API_END
}

tft_status tft_config_set_checkpoint(tft_config* config, const tft_checkpoint_config* checkpoint) {
  TFT_API_BEGIN
  auto* handle = live(config, __func__, "config");
  handle->config.checkpoint = live(checkpoint, __func__, "checkpoint")->config;
  TFT_API_END
}

tft_status tft_config_get_checkpoint(const tft_config* config, tft_checkpoint_config** out) {
  TFT_API_BEGIN
  const auto* handle = live(config, __func__, "config");
  require(out, __func__, "out");
  auto copy = std::make_unique<tft_checkpoint_config>();
  copy->config = handle->config.checkpoint;
  *out = tft::capi::publish(std::move(copy));
  TFT_API_END
}

tft_status tft_config_validate(const tft_config* config) {
  TFT_API_BEGIN
  live(config, __func__, "config")->config.validate();
  TFT_API_END
}

tft_status tft_config_to_yaml(const tft_config* config, char* buf, size_t len, size_t* needed) {
  TFT_API_BEGIN
  return tft::capi::copy_out(tft::train_config_to_yaml(live(config, __func__, "config")->config),
                             buf, len, needed, __func__);
  TFT_API_END
}

}  // extern "C"
