/* CheckpointConfig: tft_checkpoint_config_* (included by tftrain.i). */

%extend tft_checkpoint_config {
  /* The default constructor is tft_checkpoint_config_create_none. */
  tft_checkpoint_config() {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_create_none(&out));
    return out;
  }
  ~tft_checkpoint_config() { tft_checkpoint_config_free($self); }

  static tft_checkpoint_config* CreateUniform(uint64_t interval) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_create_uniform((size_t)interval, &out));
    return out;
  }
  static tft_checkpoint_config* CreateSelective(const tftswig_index_list* layers) {
    tft_checkpoint_config* out = NULL;
    if (layers == NULL) {
      tftswig_ok(tft_checkpoint_config_create_selective(NULL, 0, &out));
    } else {
      tftswig_ok(tft_checkpoint_config_create_selective(layers->items, layers->count, &out));
    }
    return out;
  }
  static tft_checkpoint_config* CreateDynamic(uint64_t num_layers, double memory_fraction) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_create_dynamic((size_t)num_layers, memory_fraction, &out));
    return out;
  }
  static tft_checkpoint_config* CreateFromYaml(const char* yaml) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_create_from_yaml(yaml, &out));
    return out;
  }
  static tft_checkpoint_config* CreateFromJson(const char* json) {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_create_from_json(json, &out));
    return out;
  }
  tft_checkpoint_config* Clone() {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_checkpoint_config_clone($self, &out));
    return out;
  }

  void SetCheckpointAttention(bool enabled) {
    tftswig_ok(tft_checkpoint_config_set_checkpoint_attention($self, enabled ? 1 : 0));
  }
  void SetCheckpointFfn(bool enabled) {
    tftswig_ok(tft_checkpoint_config_set_checkpoint_ffn($self, enabled ? 1 : 0));
  }
  void SetMinInterval(uint64_t interval) {
    tftswig_ok(tft_checkpoint_config_set_min_interval($self, (size_t)interval));
  }

  int GetStrategy() {
    tft_checkpoint_strategy out = TFT_CHECKPOINT_NONE;
    tftswig_ok(tft_checkpoint_config_get_strategy($self, &out));
    return (int)out;
  }
  bool GetCheckpointAttention() {
    int out = 0;
    tftswig_ok(tft_checkpoint_config_get_checkpoint_attention($self, &out));
    return out != 0;
  }
  bool GetCheckpointFfn() {
    int out = 0;
    tftswig_ok(tft_checkpoint_config_get_checkpoint_ffn($self, &out));
    return out != 0;
  }
  uint64_t GetMinInterval() {
    size_t out = 0;
    tftswig_ok(tft_checkpoint_config_get_min_interval($self, &out));
    return (uint64_t)out;
  }

  bool GetShouldCheckpoint(uint64_t layer) {
    int out = 0;
    tftswig_ok(tft_checkpoint_config_get_should_checkpoint($self, (size_t)layer, &out));
    return out != 0;
  }
  double GetMemorySavings(uint64_t num_layers) {
    double out = 0.0;
    tftswig_ok(tft_checkpoint_config_get_memory_savings($self, (size_t)num_layers, &out));
    return out;
  }
  double GetComputeOverhead(uint64_t num_layers) {
    double out = 0.0;
    tftswig_ok(tft_checkpoint_config_get_compute_overhead($self, (size_t)num_layers, &out));
    return out;
  }
  void Validate() { tftswig_ok(tft_checkpoint_config_validate($self)); }

  char* GetSummary() {
    TFTSWIG_STRING(tft_checkpoint_config_get_summary($self, buf, len, &needed));
  }
  char* ToYaml() { TFTSWIG_STRING(tft_checkpoint_config_to_yaml($self, buf, len, &needed)); }
  char* ToJson() { TFTSWIG_STRING(tft_checkpoint_config_to_json($self, buf, len, &needed)); }
}
