/* Config (tft_config_*) and the result structs (included by tftrain.i). */

%extend tft_config {
  /* From YAML text: tft_config_create_from_yaml. */
  tft_config(const char* yaml) {
    tft_config* out = NULL;
    tftswig_ok(tft_config_create_from_yaml(yaml, &out));
    return out;
  }
  ~tft_config() { tft_config_free($self); }

  static tft_config* CreateFromFile(const char* path) {
    tft_config* out = NULL;
    tftswig_ok(tft_config_create_from_file(path, &out));
    return out;
  }
  tft_config* Clone() {
    tft_config* out = NULL;
    tftswig_ok(tft_config_clone($self, &out));
    return out;
  }
  char* GetValue(const char* key) {
    TFTSWIG_STRING(tft_config_get_value($self, key, buf, len, &needed));
  }
  void SetValue(const char* key, const char* value) {
    tftswig_ok(tft_config_set_value($self, key, value));
  }
  void SetCheckpoint(const tft_checkpoint_config* checkpoint) {
    tftswig_ok(tft_config_set_checkpoint($self, checkpoint));
  }
  tft_checkpoint_config* GetCheckpoint() {
    tft_checkpoint_config* out = NULL;
    tftswig_ok(tft_config_get_checkpoint($self, &out));
    return out;
  }
  void Validate() { tftswig_ok(tft_config_validate($self)); }
  char* ToYaml() { TFTSWIG_STRING(tft_config_to_yaml($self, buf, len, &needed)); }
}

/* ---------------------------------------------------------------------------------------
 * Results: read-only structs; the library fills them. The constructor sets struct_size.
 */

%define TFTSWIG_RESULT_STRUCT(type)
%extend type {
  type() {
    type* r = (type*)calloc(1, sizeof(type));
    if (r != NULL) r->struct_size = sizeof(type);
    return r;
  }
  ~type() { free($self); }
}
%enddef
TFTSWIG_RESULT_STRUCT(tft_metrics)
TFTSWIG_RESULT_STRUCT(tft_memory_report)
TFTSWIG_RESULT_STRUCT(tft_train_summary)
TFTSWIG_RESULT_STRUCT(tft_forecast_info)
TFTSWIG_RESULT_STRUCT(tft_backtest_summary)

/* Progress records are only lent to callbacks; no constructor. */
%nodefaultctor tft_progress;
%nodefaultdtor tft_progress;
