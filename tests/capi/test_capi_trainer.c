/* The C API's training configuration, trainer, predictions and saved-model functions, from
 * plain C99: NULL and bad arguments, dead handles, bad files and data, training with a
 * progress callback, cancelling and resuming, forecasts into caller arrays, and a saved model
 * that forecasts bitwise like the trainer it came from. Trains examples/configs/tiny.yaml. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "capi/capi_test_support.h"

/* ------------------------------------------------------------------ configuration */

static void config_null_arguments_and_dead_handles(void** state) {
  tft_config* config = NULL;
  tft_checkpoint_config* checkpoint = NULL;
  size_t needed = 7;
  (void)state;
  ASSERT_STATUS(tft_config_load_file(NULL, &config), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_config_load_file: 'path' is NULL");
  ASSERT_STATUS(tft_config_load_file("x.yaml", NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_load_string(NULL, &config), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_clone(NULL, &config), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_get(NULL, "training.epochs", NULL, 0, &needed),
                TFT_ERROR_INVALID_ARGUMENT);
  assert_int_equal(needed, 7);
  ASSERT_STATUS(tft_config_set(NULL, "training.epochs", "3"), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_validate(NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_to_yaml(NULL, NULL, 0, &needed), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_get_checkpoint(NULL, &checkpoint), TFT_ERROR_INVALID_ARGUMENT);
  assert_null(config);
  assert_null(checkpoint);

  config = load_tiny_config("/tmp/unused");
  ASSERT_STATUS(tft_config_get(config, NULL, NULL, 0, &needed), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_set(config, "training.epochs", NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_set_checkpoint(config, NULL), TFT_ERROR_INVALID_ARGUMENT);
  /* A handle of another type is not a config, nor the other way round. */
  ASSERT_OK(tft_checkpoint_config_none(&checkpoint));
  ASSERT_STATUS(tft_config_validate((const tft_config*)checkpoint), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("not a tft_config");
  ASSERT_STATUS(tft_checkpoint_config_validate((const tft_checkpoint_config*)config),
                TFT_ERROR_INVALID_ARGUMENT);
  tft_checkpoint_config_free((tft_checkpoint_config*)config); /* ignored: wrong type */
  ASSERT_OK(tft_config_validate(config));
  tft_checkpoint_config_free(checkpoint);
  tft_config_free(config);
  ASSERT_STATUS(tft_config_validate(config), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("dead handle");
  tft_config_free(config); /* a second free is ignored */
  tft_config_free(NULL);
}

static void config_file_errors_name_file_line_and_key(void** state) {
  tft_config* config = NULL;
  char dir[256], path[300];
  FILE* file;
  (void)state;
  ASSERT_STATUS(tft_config_load_file("/nonexistent/tft.yaml", &config), TFT_ERROR_IO);
  ASSERT_ERROR_HAS("/nonexistent/tft.yaml");

  make_scratch_dir(dir, "config");
  snprintf(path, sizeof path, "%s/bad.yaml", dir);
  file = fopen(path, "w");
  assert_non_null(file);
  fputs("data:\n  path: x.csv\n  time_column: t\n  target: y\nwindows:\n"
        "  encoder_length: 8\n  prediction_length: 2\ntraining:\n  epochs: ten\n",
        file);
  fclose(file);
  ASSERT_STATUS(tft_config_load_file(path, &config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("bad.yaml:9");
  ASSERT_ERROR_HAS("training.epochs");
  ASSERT_ERROR_HAS("ten");
  assert_null(config);

  ASSERT_STATUS(tft_config_load_string("training: {epoch: 3}\n", &config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("unknown key 'epoch'");
  ASSERT_STATUS(tft_config_load_string("data: [unclosed\n", &config), TFT_ERROR_CONFIG);
  assert_null(config);
  remove_tree(dir);
}

static void config_get_set_validate_and_round_trip(void** state) {
  tft_config* config = load_tiny_config("/tmp/unused");
  tft_config* back = NULL;
  tft_checkpoint_config* checkpoint = NULL;
  char value[128], *yaml, *yaml_back, small[3];
  size_t needed = 0, needed_back = 0;
  int flag = -1;
  (void)state;

  ASSERT_OK(tft_config_get(config, "training.epochs", value, sizeof value, NULL));
  assert_string_equal(value, "2");
  ASSERT_OK(tft_config_get(config, "model.quantiles", value, sizeof value, &needed));
  assert_string_equal(value, "[0.1, 0.5, 0.9]");
  assert_int_equal(needed, strlen(value) + 1);
  ASSERT_STATUS(tft_config_get(config, "model.quantiles", small, sizeof small, &needed),
                TFT_ERROR_BUFFER_TOO_SMALL);
  assert_string_equal(small, "[0");
  ASSERT_STATUS(tft_config_get(config, "training.epoch", value, sizeof value, NULL),
                TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("unknown key 'epoch'");

  /* A wrong type leaves the value as it was. */
  ASSERT_STATUS(tft_config_set(config, "training.epochs", "ten"), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("training.epochs: expected a positive integer, got \"ten\"");
  ASSERT_OK(tft_config_get(config, "training.epochs", value, sizeof value, NULL));
  assert_string_equal(value, "2");
  ASSERT_OK(tft_config_set(config, "training.epochs", "5"));
  ASSERT_OK(tft_config_get(config, "training.epochs", value, sizeof value, NULL));
  assert_string_equal(value, "5");

  /* Setters check types; validate checks the rules. */
  ASSERT_OK(tft_config_set(config, "split.validation_steps", "3"));
  ASSERT_STATUS(tft_config_validate(config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("split.validation_steps");
  ASSERT_OK(tft_config_set(config, "split.validation_steps", "56"));
  ASSERT_OK(tft_config_validate(config));

  /* Quantization-aware training is configured by its dotted keys, like every training key. */
  ASSERT_OK(tft_config_set(config, "training.qat.enabled", "true"));
  ASSERT_OK(tft_config_set(config, "training.qat.activation_bits", "6"));
  ASSERT_OK(tft_config_get(config, "training.qat", value, sizeof value, NULL));
  assert_string_equal(value, "{enabled: true, start_epoch: 1, weight_bits: 8, activation_bits: 6, "
                             "freeze_observers_epoch: 0}");
  ASSERT_OK(tft_config_validate(config));
  ASSERT_OK(tft_config_set(config, "training.qat.weight_bits", "12"));
  ASSERT_STATUS(tft_config_validate(config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("training.qat.weight_bits: must be in [2, 8] (got 12)");
  ASSERT_OK(tft_config_set(config, "training.qat", "{enabled: false}"));
  ASSERT_OK(tft_config_validate(config));

  /* The checkpoint section, as a handle. */
  ASSERT_OK(tft_checkpoint_config_uniform(2, &checkpoint));
  ASSERT_OK(tft_config_set_checkpoint(config, checkpoint));
  tft_checkpoint_config_free(checkpoint);
  checkpoint = NULL;
  ASSERT_OK(tft_config_get(config, "checkpoint.interval", value, sizeof value, NULL));
  assert_string_equal(value, "2");
  ASSERT_OK(tft_config_get_checkpoint(config, &checkpoint));
  ASSERT_OK(tft_checkpoint_config_should_checkpoint(checkpoint, 1, &flag));
  assert_int_equal(flag, 0);
  ASSERT_OK(tft_checkpoint_config_should_checkpoint(checkpoint, 2, &flag));
  assert_int_equal(flag, 1);
  tft_checkpoint_config_free(checkpoint);

  /* YAML out and back in gives the same configuration. */
  ASSERT_OK(tft_config_to_yaml(config, NULL, 0, &needed));
  yaml = malloc(needed);
  assert_non_null(yaml);
  ASSERT_OK(tft_config_to_yaml(config, yaml, needed, NULL));
  assert_non_null(strstr(yaml, "epochs: 5"));
  ASSERT_OK(tft_config_load_string(yaml, &back));
  ASSERT_OK(tft_config_to_yaml(back, NULL, 0, &needed_back));
  assert_int_equal(needed, needed_back);
  yaml_back = malloc(needed_back);
  assert_non_null(yaml_back);
  ASSERT_OK(tft_config_to_yaml(back, yaml_back, needed_back, NULL));
  assert_string_equal(yaml, yaml_back);
  free(yaml);
  free(yaml_back);
  tft_config_free(back);
  tft_config_free(config);
}

/* ------------------------------------------------------------------ trainer */

static void trainer_errors_name_what_is_wrong(void** state) {
  tft_config* config = load_tiny_config("/tmp/unused");
  tft_trainer* trainer = NULL;
  tft_checkpoint_config* checkpoint = NULL;
  const size_t far_layer[] = {40};
  (void)state;
  ASSERT_STATUS(tft_trainer_create(NULL, &trainer), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_create(config, NULL), TFT_ERROR_INVALID_ARGUMENT);

  ASSERT_OK(tft_config_set(config, "data.path", "\"/nonexistent/data.csv\""));
  ASSERT_STATUS(tft_trainer_create(config, &trainer), TFT_ERROR_IO);
  ASSERT_ERROR_HAS("/nonexistent/data.csv");

  tft_config_free(config);
  config = load_tiny_config("/tmp/unused");
  ASSERT_OK(tft_config_set(config, "data.unknown_reals", "[footfall, no_such_column]"));
  ASSERT_STATUS(tft_trainer_create(config, &trainer), TFT_ERROR_DATA);
  ASSERT_ERROR_HAS("no_such_column");

  tft_config_free(config);
  config = load_tiny_config("/tmp/unused");
  ASSERT_OK(tft_checkpoint_config_selective(far_layer, 1, &checkpoint));
  ASSERT_OK(tft_config_set_checkpoint(config, checkpoint));
  ASSERT_STATUS(tft_trainer_create(config, &trainer), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("40");
  assert_null(trainer);
  tft_checkpoint_config_free(checkpoint);
  tft_config_free(config);

  ASSERT_STATUS(tft_trainer_train(NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_cancel(NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_load("/nonexistent/model", NULL), TFT_ERROR_INVALID_ARGUMENT);
  tft_trainer_free(NULL);
}

/* Every trainer, predictions and model function with a NULL handle or out-pointer: a status
 * and a message naming the parameter, never a crash, and out-pointers left untouched. */
static void every_function_rejects_null(void** state) {
  tft_metrics metrics;
  tft_memory_report memory;
  tft_forecast_info info;
  tft_predictions* predictions = (tft_predictions*)0x1; /* must stay untouched */
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

  ASSERT_STATUS(tft_trainer_set_progress_callback(NULL, NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_trainer_set_progress_callback: 'trainer' is NULL");
  ASSERT_STATUS(tft_trainer_resume(NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_trainer_resume: 'trainer' is NULL");
  ASSERT_STATUS(tft_trainer_evaluate(NULL, &metrics), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_predict(NULL, &predictions), TFT_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(predictions, (tft_predictions*)0x1);
  ASSERT_STATUS(tft_trainer_predict_csv(NULL, "x.csv"), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_save(NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_memory_report(NULL, &memory), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_predict(NULL, NULL, &predictions), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_model_predict: 'model' is NULL");
  ASSERT_STATUS(tft_model_load("x", &model), TFT_ERROR_IO);
  assert_null(model);
  ASSERT_STATUS(tft_predictions_shape(NULL, &n, &n, &n), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_quantiles(NULL, &level, 1), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_forecast_info(NULL, 0, &info), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_series_name(NULL, 0, buf, sizeof buf, NULL),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_values(NULL, &value, 1), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_actuals(NULL, &value, 1), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_times(NULL, &time, 1), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_write_csv(NULL, "x.csv"), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_predictions_write_csv: 'predictions' is NULL");
  assert_int_equal(n, 0);
}

struct progress_log {
  int64_t steps_seen;
  int64_t epochs_seen;
  int64_t last_epoch, last_step;
  int ordered; /* 1 while (epoch, step) only ever increased */
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

static void train_predict_save_load(void** state) {
  char dir[256], path[400];
  tft_config* config;
  tft_trainer* trainer = NULL;
  tft_train_report report;
  tft_metrics metrics;
  tft_memory_report memory;
  tft_predictions *predictions = NULL, *loaded_predictions = NULL;
  tft_model* model = NULL;
  tft_forecast_info info;
  struct progress_log log = {0, 0, 0, 0, 1, 0};
  size_t forecasts = 0, horizon = 0, quantiles = 0, n2 = 0, h2 = 0, q2 = 0, i, futures = 0;
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

  memset(&report, 0, sizeof report);
  ASSERT_STATUS(tft_trainer_train(trainer, &report), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("struct_size");
  report.struct_size = sizeof report;
  ASSERT_OK(tft_trainer_train(trainer, &report));

  assert_int_equal(report.epochs_run, 2);
  assert_int_equal(log.epochs_seen, 2);
  assert_true(log.ordered);
  assert_true(log.steps_seen >= 4);
  assert_true(report.best_epoch >= 1);
  assert_true(report.best_validation_loss < report.initial_validation_loss);
  assert_true(isfinite(report.final_train_loss));
  assert_int_equal(report.validation.struct_size, sizeof(tft_metrics));
  assert_true(report.validation.windows > 0);
  assert_true(fabs(report.validation.loss - report.best_validation_loss) < 1e-12);
  assert_true(report.peak_activation_bytes > 0);
  assert_true(report.memory.unchecked_peak_bytes > report.memory.checkpointed_peak_bytes);
  assert_true(report.memory.measured_savings > 0.3);
  assert_int_equal(report.memory.num_units, 6);

  memset(&metrics, 0, sizeof metrics);
  metrics.struct_size = sizeof metrics;
  ASSERT_OK(tft_trainer_evaluate(trainer, &metrics));
  ASSERT_STATUS(tft_trainer_evaluate(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_memory_report(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_predict(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_trainer_predict_csv(trainer, NULL), TFT_ERROR_INVALID_ARGUMENT);
  assert_true(metrics.loss == report.validation.loss); /* the kept weights, bitwise */
  assert_true(metrics.q_risk_p50 == report.validation.q_risk_p50);

  /* An older, shorter struct gets only the fields it has. */
  memset(&memory, 0x5a, sizeof memory);
  memory.struct_size = offsetof(tft_memory_report, unchecked_peak_bytes);
  ASSERT_OK(tft_trainer_memory_report(trainer, &memory));
  assert_int_equal(memory.struct_size, offsetof(tft_memory_report, unchecked_peak_bytes));
  assert_true(memory.checkpointed_peak_bytes > 0);
  assert_true(memory.unchecked_peak_bytes == (int64_t)0x5a5a5a5a5a5a5a5aLL); /* untouched */

  /* Forecasts into caller arrays. */
  ASSERT_OK(tft_trainer_predict(trainer, &predictions));
  ASSERT_OK(tft_predictions_shape(predictions, &forecasts, &horizon, &quantiles));
  assert_int_equal(horizon, 7);
  assert_int_equal(quantiles, 3);
  assert_true(forecasts > 12);
  ASSERT_STATUS(tft_predictions_quantiles(predictions, too_few, 2), TFT_ERROR_BUFFER_TOO_SMALL);
  ASSERT_OK(tft_predictions_quantiles(predictions, levels, 3));
  assert_true(levels[0] == 0.1 && levels[1] == 0.5 && levels[2] == 0.9);
  values = malloc(forecasts * horizon * quantiles * sizeof *values);
  actuals = malloc(forecasts * horizon * sizeof *actuals);
  times = malloc(forecasts * horizon * sizeof *times);
  assert_true(values != NULL && actuals != NULL && times != NULL);
  ASSERT_STATUS(tft_predictions_values(predictions, values, forecasts * horizon * quantiles - 1),
                TFT_ERROR_BUFFER_TOO_SMALL);
  ASSERT_STATUS(tft_predictions_values(predictions, NULL, 0), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_OK(tft_predictions_values(predictions, values, forecasts * horizon * quantiles));
  ASSERT_OK(tft_predictions_actuals(predictions, actuals, forecasts * horizon));
  ASSERT_OK(tft_predictions_times(predictions, times, forecasts * horizon));
  for (i = 0; i < forecasts; ++i) {
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ASSERT_OK(tft_predictions_forecast_info(predictions, i, &info));
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
  ASSERT_STATUS(tft_predictions_forecast_info(predictions, 0, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_predictions_forecast_info(predictions, forecasts, &info),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("out of range");
  ASSERT_OK(tft_predictions_series_name(predictions, 3, name, sizeof name, NULL));
  assert_string_equal(name, "store_03");
  ASSERT_STATUS(tft_predictions_series_name(predictions, 12, name, sizeof name, NULL),
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
  ASSERT_OK(tft_model_load(path, &model));
  ASSERT_OK(tft_model_predict(model, NULL, &loaded_predictions));
  ASSERT_OK(tft_predictions_shape(loaded_predictions, &n2, &h2, &q2));
  assert_int_equal(n2, forecasts);
  loaded_values = malloc(forecasts * horizon * quantiles * sizeof *loaded_values);
  assert_non_null(loaded_values);
  ASSERT_OK(tft_predictions_values(loaded_predictions, loaded_values,
                                   forecasts * horizon * quantiles));
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
  /* Use after free is an error, not a crash. */
  ASSERT_STATUS(tft_trainer_train(trainer, &report), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("dead handle");
  ASSERT_STATUS(tft_predictions_shape(predictions, &n2, NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_predict(model, NULL, &loaded_predictions), TFT_ERROR_INVALID_ARGUMENT);
  tft_trainer_free(trainer);
  remove_tree(dir);
}

static void cancel_from_callback_then_resume_like_uninterrupted(void** state) {
  char dir[256], straight_dir[300], stopped_dir[300];
  tft_config* config;
  tft_trainer *straight = NULL, *stopped = NULL;
  tft_train_report straight_report, resumed_report;
  struct progress_log log = {0, 0, 0, 0, 1, 2};
  (void)state;
  make_scratch_dir(dir, "cancel");
  snprintf(straight_dir, sizeof straight_dir, "%s/straight", dir);
  snprintf(stopped_dir, sizeof stopped_dir, "%s/stopped", dir);

  config = load_tiny_config(straight_dir);
  ASSERT_OK(tft_trainer_create(config, &straight));
  memset(&straight_report, 0, sizeof straight_report);
  straight_report.struct_size = sizeof straight_report;
  ASSERT_OK(tft_trainer_train(straight, &straight_report));
  tft_trainer_free(straight);
  tft_config_free(config);

  /* Cancelled at the first step of epoch 2: epoch 1's snapshot stays. */
  config = load_tiny_config(stopped_dir);
  ASSERT_OK(tft_trainer_create(config, &stopped));
  ASSERT_OK(tft_trainer_set_progress_callback(stopped, record_progress, &log));
  ASSERT_STATUS(tft_trainer_train(stopped, NULL), TFT_ERROR_CANCELLED);
  assert_int_equal(log.epochs_seen, 1);

  /* Resumed (callback cleared), it ends bitwise like the run that never stopped. */
  ASSERT_OK(tft_trainer_set_progress_callback(stopped, NULL, NULL));
  memset(&resumed_report, 0, sizeof resumed_report);
  resumed_report.struct_size = sizeof resumed_report;
  ASSERT_OK(tft_trainer_resume(stopped, &resumed_report));
  assert_int_equal(resumed_report.resumed_from_epoch, 1);
  assert_int_equal(resumed_report.epochs_run, 2);
  assert_true(resumed_report.final_validation_loss == straight_report.final_validation_loss);
  assert_true(resumed_report.final_train_loss == straight_report.final_train_loss);

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
  ASSERT_STATUS(tft_model_load(NULL, &model), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_model_load("/nonexistent/model", &model), TFT_ERROR_IO);
  ASSERT_ERROR_HAS("/nonexistent/model");
  make_scratch_dir(dir, "emptymodel");
  ASSERT_STATUS(tft_model_load(dir, &model), TFT_ERROR_IO);
  assert_null(model);
  remove_tree(dir);
  tft_model_free(NULL);
  tft_predictions_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_null_arguments_and_dead_handles),
      cmocka_unit_test(config_file_errors_name_file_line_and_key),
      cmocka_unit_test(config_get_set_validate_and_round_trip),
      cmocka_unit_test(trainer_errors_name_what_is_wrong),
      cmocka_unit_test(every_function_rejects_null),
      cmocka_unit_test(train_predict_save_load),
      cmocka_unit_test(cancel_from_callback_then_resume_like_uninterrupted),
      cmocka_unit_test(model_load_errors),
  };
  return cmocka_run_group_tests_name("capi_trainer", tests, NULL, NULL);
}
