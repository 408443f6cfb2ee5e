/* Trainer (tft_trainer_*), TrainReport (tft_train_report_*) and BacktestReport
 * (tft_backtest_*) (included by tftrain.i). */

%extend tft_train_report {
  ~tft_train_report() { tft_train_report_free($self); }
  void GetSummary(tft_train_summary* out) {
    if (out != NULL) out->struct_size = sizeof(tft_train_summary);
    tftswig_ok(tft_train_report_get_summary($self, out));
  }
  void GetValidation(tft_metrics* out) {
    if (out != NULL) out->struct_size = sizeof(tft_metrics);
    tftswig_ok(tft_train_report_get_validation($self, out));
  }
  void GetMemory(tft_memory_report* out) {
    if (out != NULL) out->struct_size = sizeof(tft_memory_report);
    tftswig_ok(tft_train_report_get_memory($self, out));
  }
}

%extend tft_trainer {
  tft_trainer(const tft_config* config) {
    tft_trainer* out = NULL;
    tftswig_ok(tft_trainer_create(config, &out));
    return out;
  }
  ~tft_trainer() { tft_trainer_free($self); }

  /* Clears the progress callback. */
  void ClearProgress() { tftswig_ok(tft_trainer_set_progress_callback($self, NULL, NULL)); }
#if defined(SWIGCSHARP)
  /* The delegate must stay alive until it is cleared or the trainer is freed. */
  void SetProgress(tft_progress_fn fn) {
    tftswig_ok(tft_trainer_set_progress_callback($self, fn, NULL));
  }
#endif
#if defined(SWIGGO)
  /* A cgo.Handle value resolved by tftgoProgress; 0 clears. */
  void SetProgressHandle(uint64_t handle) {
    tftswig_ok(tft_trainer_set_progress_callback($self, handle ? tftswig_go_progress : NULL,
                                                  (void*)(uintptr_t)handle));
  }
#endif
  /* A new TrainReport of the run. */
  tft_train_report* Train() {
    tft_train_report* out = NULL;
    tftswig_ok(tft_trainer_train($self, &out));
    return out;
  }
  tft_train_report* Resume() {
    tft_train_report* out = NULL;
    tftswig_ok(tft_trainer_resume($self, &out));
    return out;
  }
  void Cancel() { tftswig_ok(tft_trainer_cancel($self)); }
  void Evaluate(tft_metrics* out) {
    if (out != NULL) out->struct_size = sizeof(tft_metrics);
    tftswig_ok(tft_trainer_evaluate($self, out));
  }
  tft_predictions* Predict() {
    tft_predictions* out = NULL;
    tftswig_ok(tft_trainer_predict($self, &out));
    return out;
  }
  void PredictCsv(const char* path) { tftswig_ok(tft_trainer_predict_csv($self, path)); }
  /* directory NULL or "": output.directory/model. */
  void Save(const char* directory) {
    tftswig_ok(tft_trainer_save($self, (directory != NULL && directory[0] != '\0') ? directory : NULL));
  }
  void MeasureMemory(tft_memory_report* out) {
    if (out != NULL) out->struct_size = sizeof(tft_memory_report);
    tftswig_ok(tft_trainer_measure_memory($self, out));
  }
}

/* A rolling-origin backtest: the constructor runs it (tft_backtest_run, no progress callback;
 * docs/backtest.md), and so does Run with a progress callback (the same per language as a
 * Trainer's SetProgress); the methods read its report. */
%extend tft_backtest_report {
  tft_backtest_report(const tft_config* config) {
    tft_backtest_report* out = NULL;
    tftswig_ok(tft_backtest_run(config, NULL, NULL, &out));
    return out;
  }
#if defined(SWIGCSHARP)
  /* The delegate must stay alive until Run returns. */
  static tft_backtest_report* Run(const tft_config* config, tft_progress_fn fn) {
    tft_backtest_report* out = NULL;
    tftswig_ok(tft_backtest_run(config, fn, NULL, &out));
    return out;
  }
#endif
#if defined(SWIGGO)
  /* A cgo.Handle value resolved by tftgoProgress, as Trainer.SetProgressHandle takes. */
  static tft_backtest_report* RunWithProgressHandle(const tft_config* config, uint64_t handle) {
    tft_backtest_report* out = NULL;
    tftswig_ok(tft_backtest_run(config, handle ? tftswig_go_progress : NULL,
                                (void*)(uintptr_t)handle, &out));
    return out;
  }
#endif
  ~tft_backtest_report() { tft_backtest_report_free($self); }
  void GetSummary(tft_backtest_summary* out) {
    if (out != NULL) out->struct_size = sizeof(tft_backtest_summary);
    tftswig_ok(tft_backtest_report_get_summary($self, out));
  }
  /* fold 0: every fold pooled; forecaster: a Forecaster value. */
  void GetMetrics(int64_t fold, int forecaster, tft_metrics* out) {
    if (out != NULL) out->struct_size = sizeof(tft_metrics);
    tftswig_ok(tft_backtest_report_get_metrics($self, fold, (tft_forecaster)forecaster, out));
  }
}
