/* The C API's trainer, train report, predictions and saved-model functions, from plain C99:
 * NULL and bad arguments, dead handles, bad data, training with a progress callback,
 * cancelling and resuming, forecasts into caller arrays (with size queries), and a saved model
 * that forecasts bitwise like the trainer it came from, and a backtest with its report. Trains
 * examples/configs/tiny.yaml.
 * The configuration's own tests are test_capi_config.c. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "capi/capi_test_support.h"

/* ------------------------------------------------------------------ trainer */

static void trainer_errors_name_what_is_wrong(void** state) {
  tft_config* config = load_tiny_config("/tmp/unused");
  tft_trainer* trainer = NULL;
  tft_checkpoint_config* checkpoint = NULL;
  const size_t far_layer[] = {40};
  (void)state;
  ASSERT_STATUS(tft_trainer_create(NULL, &trainer), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_create(config, NULL), TFT_ERROR_INVALID_ARGUMENT);

  ASSERT_OK(tft_config_set_value(config, "data.path", "\"/nonexistent/data.csv\""));
  ASSERT_STATUS(tft_trainer_create(config, &trainer), TFT_ERROR_IO);
  ASSERT_ERROR_HAS("/nonexistent/data.csv");

  tft_config_free(config);
  config = load_tiny_config("/tmp/unused");
  ASSERT_OK(tft_config_set_value(config, "data.unknown_reals", "[footfall, no_such_column]"));
  ASSERT_STATUS(tft_trainer_create(config, &trainer), TFT_ERROR_DATA);
  ASSERT_ERROR_HAS("no_such_column");

  tft_config_free(config);
  config = load_tiny_config("/tmp/unused");
  ASSERT_OK(tft_checkpoint_config_create_selective(far_layer, 1, &checkpoint));
  ASSERT_OK(tft_config_set_checkpoint(config, checkpoint));
  ASSERT_STATUS(tft_trainer_create(config, &trainer), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("40");
  assert_null(trainer);
  tft_checkpoint_config_free(checkpoint);
  tft_config_free(config);

  ASSERT_STATUS(tft_trainer_train(NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_cancel(NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_create_from_directory("/nonexistent/model", NULL),
                TFT_ERROR_INVALID_ARGUMENT);
  tft_trainer_free(NULL);
}

/* Every trainer, predictions and model function with a NULL handle or out-pointer: a status
 * and a message naming the parameter, never a crash, and out-pointers left untouched. */
static void every_function_rejects_null(void** state) {
  tft_metrics metrics;
  tft_memory_report memory;
  tft_forecast_info info;
  tft_train_summary summary;
  tft_predictions* predictions = (tft_predictions*)0x1; /* must stay untouched */
  tft_train_report* report = (tft_train_report*)0x1;    /* must stay untouched */
  tft_model* model = NULL;
  size_t n = 0;
  float value = 0;
  double level = 0;
  int64_t time = 0;
  char buf[8];
  (void)state;
  memset(&metrics, 0, sizeof metrics);
  metrics.struct_size = sizeof metrics;
  memset(&memory, 0, sizeof memory);
  memory.struct_size = sizeof memory;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  memset(&summary, 0, sizeof summary);
  summary.struct_size = sizeof summary;

  ASSERT_STATUS(tft_trainer_set_progress_callback(NULL, NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_trainer_set_progress_callback: 'trainer' is NULL");
  ASSERT_STATUS(tft_trainer_resume(NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_trainer_resume: 'trainer' is NULL");
  ASSERT_STATUS(tft_trainer_train(NULL, &report), TFT_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(report, (tft_train_report*)0x1);
  ASSERT_STATUS(tft_train_report_get_summary(NULL, &summary), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_train_report_get_summary: 'report' is NULL");
  ASSERT_STATUS(tft_train_report_get_validation(NULL, &metrics), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_train_report_get_memory(NULL, &memory), TFT_ERROR_INVALID_ARGUMENT);
  tft_train_report_free(NULL);
  ASSERT_STATUS(tft_trainer_evaluate(NULL, &metrics), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_predict(NULL, &predictions), TFT_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(predictions, (tft_predictions*)0x1);
  ASSERT_STATUS(tft_trainer_predict_csv(NULL, "x.csv"), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_save(NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_measure_memory(NULL, &memory), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_predict(NULL, NULL, &predictions), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_model_predict: 'model' is NULL");
  ASSERT_STATUS(tft_model_create_from_directory("x", &model), TFT_ERROR_IO);
  assert_null(model);
  ASSERT_STATUS(tft_predictions_get_shape(NULL, &n, &n, &n), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_get_quantiles(NULL, &level, 1, &n), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_get_forecast_info(NULL, 0, &info), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_get_series_name(NULL, 0, buf, sizeof buf, NULL),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_get_values(NULL, &value, 1, &n), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_get_actuals(NULL, &value, 1, &n), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_get_times(NULL, &time, 1, &n), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_write_csv(NULL, "x.csv"), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_predictions_write_csv: 'predictions' is NULL");
  assert_int_equal(n, 0);
}

struct progress_log {
  int64_t steps_seen;
  int64_t epochs_seen;
  int64_t last_epoch, last_step;
  int ordered;             /* 1 while (epoch, step) only ever increased */
  int64_t cancel_at_epoch; /* cancel at this epoch's first step; 0: never */
};

static int record_progress(const tft_progress* p, void* user) {
  struct progress_log* log = user;
  assert_true(p->struct_size >= sizeof *p);
  if (p->kind == TFT_PROGRESS_STEP) {
    if (p->epoch < log->last_epoch ||
        (p->epoch == log->last_epoch && p->step != log->last_step + 1)) {
      log->ordered = 0;
    }
    if (p->epoch != log->last_epoch && p->step != 1) log->ordered = 0;
    log->last_epoch = p->epoch;
    log->last_step = p->step;
    ++log->steps_seen;
    assert_true(p->step <= p->steps_per_epoch);
    assert_true(isfinite(p->train_loss));
    assert_true(isnan(p->validation_loss));
    if (p->epoch == log->cancel_at_epoch && p->step == 1) return 1;
  } else {
    ++log->epochs_seen;
    assert_true(isfinite(p->validation_loss));
  }
  return 0;
}

/* The report of a finished run: its figures, its validation metrics and memory, each through
 * its getter; a struct_size of 0 is refused and an older, shorter struct gets its fields. */
static void check_train_report(const tft_train_report* report, tft_trainer* trainer) {
  tft_train_summary summary;
  tft_metrics validation, metrics;
  tft_memory_report memory;
  memset(&summary, 0, sizeof summary);
  ASSERT_STATUS(tft_train_report_get_summary(report, &summary), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("struct_size");
  summary.struct_size = sizeof summary;
  ASSERT_OK(tft_train_report_get_summary(report, &summary));
  assert_int_equal(summary.epochs_run, 2);
  assert_true(summary.best_epoch >= 1);
  assert_true(summary.best_validation_loss < summary.initial_validation_loss);
  assert_true(isfinite(summary.final_train_loss));
  assert_true(summary.peak_activation_bytes > 0);
  assert_true(summary.train_seconds > 0 && summary.samples_per_second > 0);

  memset(&validation, 0, sizeof validation);
  validation.struct_size = sizeof validation;
  ASSERT_OK(tft_train_report_get_validation(report, &validation));
  assert_true(validation.windows > 0);
  assert_true(fabs(validation.loss - summary.best_validation_loss) < 1e-12);

  memset(&memory, 0x5a, sizeof memory);
  memory.struct_size = sizeof memory;
  ASSERT_OK(tft_train_report_get_memory(report, &memory));
  assert_true(memory.unchecked_peak_bytes > memory.checkpointed_peak_bytes);
  assert_true(memory.measured_savings > 0.3);
  assert_int_equal(memory.num_units, 6);
  ASSERT_STATUS(tft_train_report_get_memory(report, NULL), TFT_ERROR_INVALID_ARGUMENT);

  memset(&metrics, 0, sizeof metrics);
  metrics.struct_size = sizeof metrics;
  ASSERT_OK(tft_trainer_evaluate(trainer, &metrics));
  ASSERT_STATUS(tft_trainer_evaluate(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
  assert_true(metrics.loss == validation.loss); /* the kept weights, bitwise */
  assert_true(metrics.q_risk_p50 == validation.q_risk_p50);

  /* An older, shorter struct gets only the fields it has. */
  memset(&memory, 0x5a, sizeof memory);
  memory.struct_size = offsetof(tft_memory_report, unchecked_peak_bytes);
  ASSERT_OK(tft_trainer_measure_memory(trainer, &memory));
  assert_int_equal(memory.struct_size, offsetof(tft_memory_report, unchecked_peak_bytes));
  assert_true(memory.checkpointed_peak_bytes > 0);
  assert_true(memory.unchecked_peak_bytes == (int64_t)0x5a5a5a5a5a5a5a5aLL); /* untouched */
  ASSERT_STATUS(tft_trainer_measure_memory(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
}

static void train_predict_save_load(void** state) {
  char dir[256], path[400];
  tft_config* config;
  tft_trainer* trainer = NULL;
  tft_train_report* report = NULL;
  tft_predictions *predictions = NULL, *loaded_predictions = NULL;
  tft_model* model = NULL;
  tft_forecast_info info;
  struct progress_log log = {0, 0, 0, 0, 1, 0};
  size_t forecasts = 0, horizon = 0, quantiles = 0, n2 = 0, h2 = 0, q2 = 0, i, futures = 0;
  size_t needed = 0;
  double levels[3], too_few[2];
  float *values, *loaded_values, *actuals;
  int64_t* times;
  char name[64];
  (void)state;

  make_scratch_dir(dir, "train");
  config = load_tiny_config(dir);
  ASSERT_OK(tft_trainer_create(config, &trainer));
  tft_config_free(config); /* the trainer keeps its own copy */
  ASSERT_OK(tft_trainer_set_progress_callback(trainer, record_progress, &log));

  ASSERT_OK(tft_trainer_train(trainer, &report));
  assert_non_null(report);
  assert_int_equal(log.epochs_seen, 2);
  assert_true(log.ordered);
  assert_true(log.steps_seen >= 4);
  check_train_report(report, trainer);
  ASSERT_STATUS(tft_trainer_predict(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_predict_csv(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);

  /* Forecasts into caller arrays. */
  ASSERT_OK(tft_trainer_predict(trainer, &predictions));
  ASSERT_OK(tft_predictions_get_shape(predictions, &forecasts, &horizon, &quantiles));
  assert_int_equal(horizon, 7);
  assert_int_equal(quantiles, 3);
  assert_true(forecasts > 12);
  /* Size queries, then arrays too short (nothing written, *needed set), then the copies. */
  ASSERT_OK(tft_predictions_get_quantiles(predictions, NULL, 0, &needed));
  assert_int_equal(needed, 3);
  needed = 0;
  too_few[0] = -1.0;
  ASSERT_STATUS(tft_predictions_get_quantiles(predictions, too_few, 2, &needed),
                TFT_ERROR_BUFFER_TOO_SMALL);
  assert_int_equal(needed, 3);
  assert_true(too_few[0] == -1.0);
  ASSERT_STATUS(tft_predictions_get_quantiles(predictions, NULL, 3, &needed),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(tft_predictions_get_quantiles(predictions, levels, 3, NULL));
  assert_true(levels[0] == 0.1 && levels[1] == 0.5 && levels[2] == 0.9);
  values = malloc(forecasts * horizon * quantiles * sizeof *values);
  actuals = malloc(forecasts * horizon * sizeof *actuals);
  times = malloc(forecasts * horizon * sizeof *times);
  assert_true(values != NULL && actuals != NULL && times != NULL);
  ASSERT_OK(tft_predictions_get_values(predictions, NULL, 0, &needed));
  assert_int_equal(needed, forecasts * horizon * quantiles);
  ASSERT_OK(tft_predictions_get_actuals(predictions, NULL, 0, &needed));
  assert_int_equal(needed, forecasts * horizon);
  needed = 0;
  ASSERT_OK(tft_predictions_get_times(predictions, NULL, 0, &needed));
  assert_int_equal(needed, forecasts * horizon);
  needed = 0;
  ASSERT_STATUS(
      tft_predictions_get_values(predictions, values, forecasts * horizon * quantiles - 1, &needed),
      TFT_ERROR_BUFFER_TOO_SMALL);
  assert_int_equal(needed, forecasts * horizon * quantiles);
  ASSERT_STATUS(tft_predictions_get_times(predictions, times, 1, NULL), TFT_ERROR_BUFFER_TOO_SMALL);
  ASSERT_OK(tft_predictions_get_values(predictions, values, forecasts * horizon * quantiles, NULL));
  ASSERT_OK(tft_predictions_get_actuals(predictions, actuals, forecasts * horizon, &needed));
  ASSERT_OK(tft_predictions_get_times(predictions, times, forecasts * horizon, NULL));
  for (i = 0; i < forecasts; ++i) {
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ASSERT_OK(tft_predictions_get_forecast_info(predictions, i, &info));
    assert_true(info.series < 12);
    assert_true(times[i * horizon] > info.origin); /* forecasts come after their origin */
    assert_true(isfinite(values[i * horizon * quantiles]));
    if (info.is_future) {
      ++futures;
      assert_true(isnan(actuals[i * horizon]));
    } else {
      assert_true(isfinite(actuals[i * horizon]));
    }
  }
  assert_int_equal(futures, 12); /* one window after the data per store */
  ASSERT_STATUS(tft_predictions_get_forecast_info(predictions, 0, NULL),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_get_forecast_info(predictions, forecasts, &info),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("out of range");
  ASSERT_OK(tft_predictions_get_series_name(predictions, 3, name, sizeof name, NULL));
  assert_string_equal(name, "store_03");
  ASSERT_STATUS(tft_predictions_get_series_name(predictions, 12, name, sizeof name, NULL),
                TFT_ERROR_INVALID_ARGUMENT);

  snprintf(path, sizeof path, "%s/api_forecast.csv", dir);
  ASSERT_OK(tft_predictions_write_csv(predictions, path));
  assert_true(file_exists(path));
  snprintf(path, sizeof path, "%s/trainer_forecast.csv", dir);
  ASSERT_OK(tft_trainer_predict_csv(trainer, path));
  assert_true(file_exists(path));
  ASSERT_STATUS(tft_trainer_predict_csv(trainer, "/nonexistent/dir/f.csv"), TFT_ERROR_IO);

  /* Saved and loaded again, the model forecasts bitwise the same numbers. */
  snprintf(path, sizeof path, "%s/saved", dir);
  ASSERT_OK(tft_trainer_save(trainer, path));
  ASSERT_OK(tft_model_create_from_directory(path, &model));
  ASSERT_OK(tft_model_predict(model, NULL, &loaded_predictions));
  ASSERT_OK(tft_predictions_get_shape(loaded_predictions, &n2, &h2, &q2));
  assert_int_equal(n2, forecasts);
  loaded_values = malloc(forecasts * horizon * quantiles * sizeof *loaded_values);
  assert_non_null(loaded_values);
  ASSERT_OK(tft_predictions_get_values(loaded_predictions, loaded_values,
                                       forecasts * horizon * quantiles, NULL));
  assert_memory_equal(values, loaded_values, forecasts * horizon * quantiles * sizeof *values);
  ASSERT_STATUS(tft_model_predict(model, "/nonexistent/new.csv", &loaded_predictions),
                TFT_ERROR_IO);

  snprintf(path, sizeof path, "%s/model/weights.pt", dir); /* written by training */
  assert_true(file_exists(path));
  snprintf(path, sizeof path, "%s/summary.json", dir);
  assert_true(file_exists(path));

  free(values);
  free(loaded_values);
  free(actuals);
  free(times);
  tft_predictions_free(predictions);
  tft_predictions_free(loaded_predictions);
  tft_model_free(model);
  tft_trainer_free(trainer);
  tft_train_report_free(report);
  /* Use after free is an error, not a crash; the report outlived its trainer until now. */
  ASSERT_STATUS(tft_trainer_train(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("dead handle");
  ASSERT_STATUS(tft_train_report_get_summary(report, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("dead handle");
  ASSERT_STATUS(tft_predictions_get_shape(predictions, &n2, NULL, NULL),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_predict(model, NULL, &loaded_predictions), TFT_ERROR_INVALID_ARGUMENT);
  tft_trainer_free(trainer);
  remove_tree(dir);
}

static void cancel_from_callback_then_resume_like_uninterrupted(void** state) {
  char dir[256], straight_dir[300], stopped_dir[300];
  tft_config* config;
  tft_trainer *straight_trainer = NULL, *stopped = NULL;
  tft_train_report *straight_report = NULL, *resumed_report = NULL;
  tft_train_summary straight, resumed;
  struct progress_log log = {0, 0, 0, 0, 1, 2};
  (void)state;
  make_scratch_dir(dir, "cancel");
  snprintf(straight_dir, sizeof straight_dir, "%s/straight", dir);
  snprintf(stopped_dir, sizeof stopped_dir, "%s/stopped", dir);

  config = load_tiny_config(straight_dir);
  ASSERT_OK(tft_trainer_create(config, &straight_trainer));
  ASSERT_OK(tft_trainer_train(straight_trainer, &straight_report));
  tft_trainer_free(straight_trainer);
  memset(&straight, 0, sizeof straight);
  straight.struct_size = sizeof straight;
  ASSERT_OK(tft_train_report_get_summary(straight_report, &straight));
  tft_train_report_free(straight_report);
  tft_config_free(config);

  /* Cancelled at the first step of epoch 2: epoch 1's snapshot stays. */
  config = load_tiny_config(stopped_dir);
  ASSERT_OK(tft_trainer_create(config, &stopped));
  ASSERT_OK(tft_trainer_set_progress_callback(stopped, record_progress, &log));
  ASSERT_STATUS(tft_trainer_train(stopped, NULL), TFT_ERROR_CANCELLED);
  assert_int_equal(log.epochs_seen, 1);

  /* Resumed (callback cleared), it ends bitwise like the run that never stopped. */
  ASSERT_OK(tft_trainer_set_progress_callback(stopped, NULL, NULL));
  ASSERT_OK(tft_trainer_resume(stopped, &resumed_report));
  memset(&resumed, 0, sizeof resumed);
  resumed.struct_size = sizeof resumed;
  ASSERT_OK(tft_train_report_get_summary(resumed_report, &resumed));
  tft_train_report_free(resumed_report);
  assert_int_equal(resumed.resumed_from_epoch, 1);
  assert_int_equal(resumed.epochs_run, 2);
  assert_true(resumed.final_validation_loss == straight.final_validation_loss);
  assert_true(resumed.final_train_loss == straight.final_train_loss);

  /* A cancel requested while idle stops the next run at its first step. */
  ASSERT_OK(tft_trainer_cancel(stopped));
  ASSERT_STATUS(tft_trainer_train(stopped, NULL), TFT_ERROR_CANCELLED);
  tft_trainer_free(stopped);
  tft_config_free(config);
  remove_tree(dir);
}

static void model_load_errors(void** state) {
  tft_model* model = NULL;
  char dir[256];
  (void)state;
  ASSERT_STATUS(tft_model_create_from_directory(NULL, &model), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_create_from_directory("/nonexistent/model", &model), TFT_ERROR_IO);
  ASSERT_ERROR_HAS("/nonexistent/model");
  make_scratch_dir(dir, "emptymodel");
  ASSERT_STATUS(tft_model_create_from_directory(dir, &model), TFT_ERROR_IO);
  assert_null(model);
  remove_tree(dir);
  tft_model_free(NULL);
  tft_predictions_free(NULL);
}

/* ------------------------------------------------------------------ backtest */

struct fold_count {
  int64_t last_fold, folds, stop_at_fold;
};

static int count_folds(const tft_progress* p, void* user) {
  struct fold_count* c = (struct fold_count*)user;
  assert_true(p->struct_size >= sizeof *p);
  assert_true(p->fold >= c->last_fold && p->fold >= 1);
  c->last_fold = p->fold;
  c->folds = p->folds;
  return c->stop_at_fold != 0 && p->fold >= c->stop_at_fold;
}

static void backtest_runs_and_reports_its_folds(void** state) {
  char dir[256], path[320];
  tft_config* config;
  tft_backtest_report* report = NULL;
  tft_backtest_summary summary;
  tft_metrics pooled, fold, naive;
  struct fold_count count = {0, 0, 0};
  (void)state;
  make_scratch_dir(dir, "backtest");
  config = load_tiny_config(dir);
  ASSERT_OK(tft_config_set_value(config, "backtest.folds", "2"));
  ASSERT_OK(tft_config_set_value(config, "backtest.mode", "refit"));
  ASSERT_OK(tft_config_set_value(config, "backtest.refit_epochs", "1"));
  ASSERT_OK(tft_backtest_run(config, count_folds, &count, &report));
  assert_int_equal(count.last_fold, 2);
  assert_int_equal(count.folds, 2);
  memset(&summary, 0, sizeof summary);
  summary.struct_size = sizeof summary;
  ASSERT_OK(tft_backtest_report_get_summary(report, &summary));
  assert_int_equal(summary.folds, 2);
  assert_int_equal(summary.finished_folds, 2);
  assert_true(summary.folds_beating_naive >= 0 && summary.folds_beating_naive <= 2);
  assert_true(summary.interval_coverage > 0.0 && summary.interval_coverage <= 1.0);
  memset(&pooled, 0, sizeof pooled);
  pooled.struct_size = sizeof pooled;
  fold = naive = pooled;
  ASSERT_OK(tft_backtest_report_get_metrics(report, 0, TFT_FORECASTER_MODEL, &pooled));
  ASSERT_OK(tft_backtest_report_get_metrics(report, 2, TFT_FORECASTER_MODEL, &fold));
  ASSERT_OK(tft_backtest_report_get_metrics(report, 0, TFT_FORECASTER_NAIVE, &naive));
  assert_true(pooled.windows == 2 * fold.windows && fold.windows > 0);
  assert_true(pooled.q_risk_p50 > 0.0 && naive.q_risk_p50 > 0.0);
  ASSERT_STATUS(tft_backtest_report_get_metrics(report, 3, TFT_FORECASTER_MODEL, &fold),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("fold 3 is not 0 (every fold) or 1 ... 2");
  ASSERT_STATUS(tft_backtest_report_get_metrics(report, 0, (tft_forecaster)7, &fold),
                TFT_ERROR_INVALID_ARGUMENT);
  tft_backtest_report_free(report);
  snprintf(path, sizeof path, "%s/backtest.csv", dir);
  assert_true(file_exists(path));

  /* Cancelled in fold 2: fold 1 stays. */
  count.last_fold = 0;
  count.stop_at_fold = 2;
  report = NULL;
  ASSERT_STATUS(tft_backtest_run(config, count_folds, &count, &report), TFT_ERROR_CANCELLED);
  assert_null(report);
  ASSERT_ERROR_HAS("the 1 finished folds are in");
  ASSERT_STATUS(tft_backtest_run(NULL, NULL, NULL, &report), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(tft_config_set_value(config, "backtest.folds", "500"));
  ASSERT_STATUS(tft_backtest_run(config, NULL, NULL, NULL), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("backtest.folds 500");
  tft_backtest_report_free(NULL);
  tft_config_free(config);
  remove_tree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trainer_errors_name_what_is_wrong),
      cmocka_unit_test(every_function_rejects_null),
      cmocka_unit_test(train_predict_save_load),
      cmocka_unit_test(cancel_from_callback_then_resume_like_uninterrupted),
      cmocka_unit_test(model_load_errors),
      cmocka_unit_test(backtest_runs_and_reports_its_folds),
  };
  return cmocka_run_group_tests_name("capi_trainer", tests, NULL, NULL);
}
