/* tft_train_yaml: train a Temporal Fusion Transformer from a YAML file through the C API.
 *
 *   tft_train_yaml [--memory] CONFIG.yaml [KEY=VALUE ...]
 *
 * KEY=VALUE pairs override the file (tft_config_set_value), e.g. training.epochs=3 or
 * output.directory=/tmp/run. --memory reads data.path's CSV into Arrow record batches with
 * nanoarrow first and trains from them (tft_data_create_from_arrow_stream,
 * tft_trainer_create_from_data) instead of letting the library read the file. Progress goes to
 * stderr, one line per epoch; the summary goes to stdout as "name: value" lines (the same fields
 * every runner prints). Exit status: 0 on success, 1 on any error (its message on stderr), 2 on bad
 * usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tftrain.h"
#ifdef TFT_RUNNER_MEMORY
#include "csv_arrow_stream.h"
#endif

static int print_epoch(const tft_progress* p, void* user) {
  (void)user;
  if (p->kind == TFT_PROGRESS_EPOCH) {
    fprintf(stderr, "epoch %lld/%lld  train loss %.6f  validation loss %.6f  %.0f samples/s\n",
            (long long)p->epoch, (long long)p->epochs, p->train_loss, p->validation_loss,
            p->samples_per_second);
  }
  return 0; /* keep going */
}

/* Reports the failed call's status and message; returns the exit status for errors. */
static int failed(const char* what, tft_status status) {
  fprintf(stderr, "tft_train_yaml: %s: %s: %s\n", what, tft_status_name(status), tft_last_error());
  return 1;
}

static int apply_override(tft_config* config, const char* assignment) {
  char key[256];
  const char* equals = strchr(assignment, '=');
  size_t key_length;
  tft_status status;
  if (equals == NULL || equals == assignment) {
    fprintf(stderr, "tft_train_yaml: expected KEY=VALUE, got \"%s\"\n", assignment);
    return 2;
  }
  key_length = (size_t)(equals - assignment);
  if (key_length >= sizeof key) {
    fprintf(stderr, "tft_train_yaml: key too long in \"%s\"\n", assignment);
    return 2;
  }
  memcpy(key, assignment, key_length);
  key[key_length] = '\0';
  status = tft_config_set_value(config, key, equals + 1);
  return status == TFT_OK ? 0 : failed("override", status);
}

/* Prints the run's figures, read from the report through its three getters. */
static tft_status print_summary(const tft_train_report* report) {
  tft_train_summary r;
  tft_metrics validation;
  tft_memory_report memory;
  tft_status status;
  memset(&r, 0, sizeof r);
  memset(&validation, 0, sizeof validation);
  memset(&memory, 0, sizeof memory);
  r.struct_size = sizeof r; /* each struct_size says which fields this runner knows */
  validation.struct_size = sizeof validation;
  memory.struct_size = sizeof memory;
  if ((status = tft_train_report_get_summary(report, &r)) != TFT_OK ||
      (status = tft_train_report_get_validation(report, &validation)) != TFT_OK ||
      (status = tft_train_report_get_memory(report, &memory)) != TFT_OK) {
    return status;
  }
  printf("epochs_run: %lld\n", (long long)r.epochs_run);
  printf("best_epoch: %lld\n", (long long)r.best_epoch);
  printf("early_stopped: %s\n", r.early_stopped ? "true" : "false");
  printf("initial_validation_loss: %.9g\n", r.initial_validation_loss);
  printf("best_validation_loss: %.9g\n", r.best_validation_loss);
  printf("final_validation_loss: %.9g\n", r.final_validation_loss);
  printf("final_train_loss: %.9g\n", r.final_train_loss);
  printf("q_risk_p50: %.9g\n", validation.q_risk_p50);
  printf("q_risk_p90: %.9g\n", validation.q_risk_p90);
  printf("samples_per_second: %.1f\n", r.samples_per_second);
  printf("peak_activation_bytes: %lld\n", (long long)r.peak_activation_bytes);
  printf("memory_savings_measured: %.4f\n", memory.measured_savings);
  printf("memory_savings_predicted: %.4f\n", memory.predicted_savings);
  return TFT_OK;
}

#ifdef TFT_RUNNER_MEMORY
/* The batch size --memory reads the CSV in: small enough that tiny.yaml's data spans several
 * batches, so the stream path is exercised as a real stream. */
#define MEMORY_ROWS_PER_BATCH 1000

/* data.path, relative to the config file's folder, into `path`. Returns 0, or 1 with a message. */
static int data_path(const tft_config* config, const char* config_path, char* path, size_t size) {
  char value[4096];
  const char* slash = strrchr(config_path, '/');
  size_t length;
  tft_status status = tft_config_get_value(config, "data.path", value, sizeof value, NULL);
  if (status != TFT_OK) return failed("data.path", status);
  length = strlen(value);
  if (length >= 2 && (value[0] == '"' || value[0] == '\'') && value[length - 1] == value[0]) {
    memmove(value, value + 1, length - 2); /* a quoted YAML scalar (no escapes in a path here) */
    value[length - 2] = '\0';
  }
  if (value[0] == '\0' || strcmp(value, "null") == 0 || strcmp(value, "~") == 0) {
    fprintf(stderr, "tft_train_yaml: --memory needs data.path, the CSV file to read into memory\n");
    return 1;
  }
  if (value[0] == '/' || slash == NULL) {
    length = (size_t)snprintf(path, size, "%s", value);
  } else {
    length =
        (size_t)snprintf(path, size, "%.*s/%s", (int)(slash - config_path), config_path, value);
  }
  if (length >= size) {
    fprintf(stderr, "tft_train_yaml: data.path is too long\n");
    return 1;
  }
  return 0;
}

/* The trainer over data.path's CSV read into memory. Returns 0, or 1 with a message. */
static int create_trainer_from_memory(const tft_config* config, const char* config_path,
                                      tft_trainer** trainer) {
  char path[4096], error[1024];
  struct ArrowArrayStream stream;
  tft_data* data = NULL;
  tft_status status;
  if (data_path(config, config_path, path, sizeof path) != 0) return 1;
  if (csv_arrow_stream_read(path, MEMORY_ROWS_PER_BATCH, &stream, error, sizeof error) != 0) {
    fprintf(stderr, "tft_train_yaml: data: %s\n", error);
    return 1;
  }
  /* The library takes the stream (and releases it) in success and failure alike. */
  if ((status = tft_data_create_from_arrow_stream(&stream, &data)) != TFT_OK) {
    return failed("data", status);
  }
  status = tft_trainer_create_from_data(config, data, trainer);
  tft_data_free(data); /* the trainer keeps its own copy of the rows */
  return status == TFT_OK ? 0 : failed("trainer", status);
}
#endif

int main(int argc, char** argv) {
  tft_config* config = NULL;
  tft_trainer* trainer = NULL;
  tft_train_report* report = NULL;
  tft_status status;
  int exit_code = 0, memory = 0, first = 1, i;

  if (argc > 1 && strcmp(argv[1], "--memory") == 0) {
#ifdef TFT_RUNNER_MEMORY
    memory = 1;
    first = 2;
#else
    fprintf(stderr,
            "tft_train_yaml: built without nanoarrow, so without --memory "
            "(scripts/setup-deps.sh fetches it)\n");
    return 2;
#endif
  }
  if (argc <= first || strcmp(argv[first], "-h") == 0 || strcmp(argv[first], "--help") == 0) {
    fprintf(stderr, "usage: %s [--memory] CONFIG.yaml [KEY=VALUE ...]\n", argv[0]);
    return 2;
  }
  status = tft_config_create_from_file(argv[first], &config);
  if (status != TFT_OK) return failed("config", status);
  for (i = first + 1; i < argc && exit_code == 0; ++i) exit_code = apply_override(config, argv[i]);
  if (exit_code == 0 && (status = tft_config_validate(config)) != TFT_OK) {
    exit_code = failed("config", status);
  }
  if (exit_code == 0 && memory) {
#ifdef TFT_RUNNER_MEMORY
    exit_code = create_trainer_from_memory(config, argv[first], &trainer);
#endif
  } else if (exit_code == 0 && (status = tft_trainer_create(config, &trainer)) != TFT_OK) {
    exit_code = failed("trainer", status);
  }
  if (exit_code == 0) {
    tft_trainer_set_progress_callback(trainer, print_epoch, NULL);
    status = tft_trainer_train(trainer, &report);
    if (status == TFT_OK) status = print_summary(report);
    if (status != TFT_OK) exit_code = failed("training", status);
  }
  tft_train_report_free(report);
  tft_trainer_free(trainer);
  tft_config_free(config);
  return exit_code;
}
