/* Predictions (tft_predictions_*) and Model (tft_model_*) (included by tftrain.i). */

%extend tft_predictions {
  ~tft_predictions() { tft_predictions_free($self); }

  /* tft_predictions_get_shape, one method per output. */
  uint64_t GetForecastCount() {
    size_t n = 0;
    tftswig_ok(tft_predictions_get_shape($self, &n, NULL, NULL));
    return n;
  }
  uint64_t GetHorizon() {
    size_t n = 0;
    tftswig_ok(tft_predictions_get_shape($self, NULL, &n, NULL));
    return n;
  }
  uint64_t GetQuantileCount() {
    size_t n = 0;
    tftswig_ok(tft_predictions_get_shape($self, NULL, NULL, &n));
    return n;
  }
  /* Level i of tft_predictions_get_quantiles (doubles: a FloatArray would lose precision). */
  double GetQuantile(uint64_t i) {
    size_t n = 0;
    double* levels;
    double value = 0.0;
    if (!tftswig_ok(tft_predictions_get_quantiles($self, NULL, 0, &n))) return 0.0;
    if (i >= n) {
      tftswig_ok(tft_predictions_get_quantiles($self, NULL, 1, NULL)); /* INVALID_ARGUMENT */
      return 0.0;
    }
    levels = (double*)malloc(n * sizeof(double));
    if (levels == NULL) {
      tftswig_ok(TFT_ERROR_OUT_OF_MEMORY);
      return 0.0;
    }
    if (tftswig_ok(tft_predictions_get_quantiles($self, levels, n, NULL))) value = levels[i];
    free(levels);
    return value;
  }
  void GetForecastInfo(uint64_t index, tft_forecast_info* info) {
    if (info != NULL) info->struct_size = sizeof(tft_forecast_info);
    tftswig_ok(tft_predictions_get_forecast_info($self, (size_t)index, info));
  }
  char* GetSeriesName(uint64_t series) {
    TFTSWIG_STRING(tft_predictions_get_series_name($self, (size_t)series, buf, len, &needed));
  }
  tftswig_float_array* GetValues() {
    TFTSWIG_ARRAY(float, float, tft_predictions_get_values($self, items, count, &needed));
  }
  tftswig_float_array* GetActuals() {
    TFTSWIG_ARRAY(float, float, tft_predictions_get_actuals($self, items, count, &needed));
  }
  tftswig_int64_array* GetTimes() {
    TFTSWIG_ARRAY(int64, int64_t, tft_predictions_get_times($self, items, count, &needed));
  }
  void WriteCsv(const char* path) { tftswig_ok(tft_predictions_write_csv($self, path)); }
}

%extend tft_model {
  /* tft_model_create_from_directory. */
  tft_model(const char* directory) {
    tft_model* out = NULL;
    tftswig_ok(tft_model_create_from_directory(directory, &out));
    return out;
  }
  ~tft_model() { tft_model_free($self); }
  /* csv_path NULL (or "" from languages without null strings): the training data. */
  tft_predictions* Predict(const char* csv_path) {
    tft_predictions* out = NULL;
    tftswig_ok(tft_model_predict($self, (csv_path != NULL && csv_path[0] != '\0') ? csv_path : NULL, &out));
    return out;
  }
}
