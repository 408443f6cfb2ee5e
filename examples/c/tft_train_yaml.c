/* tft_train_yaml: train a Temporal Fusion Transformer from a YAML file through the C API.
 *
 *   tft_train_yaml CONFIG.yaml [KEY=VALUE ...]
 *
 * KEY=VALUE pairs override the file (tft_config_set_value), e.g. training.epochs=3 or
 * output.directory=/tmp/run. Progress goes to stderr, one line per epoch; the summary goes to
 * stdout as "name: value" lines (the same fields every runner prints). Exit status: 0 on
 * success, 1 on any error (its message on stderr), 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tftrain.h"

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

int main(int argc, char** argv) {
  tft_config* config = NULL;
  tft_trainer* trainer = NULL;
  tft_train_report* report = NULL;
  tft_status status;
  int exit_code = 0, i;

  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: %s CONFIG.yaml [KEY=VALUE ...]\n", argv[0]);
    return 2;
  }
  status = tft_config_create_from_file(argv[1], &config);
  if (status != TFT_OK) return failed("config", status);
  for (i = 2; i < argc && exit_code == 0; ++i) exit_code = apply_override(config, argv[i]);
  if (exit_code == 0 && (status = tft_config_validate(config)) != TFT_OK) {
    exit_code = failed("config", status);
  }
  if (exit_code == 0 && (status = tft_trainer_create(config, &trainer)) != TFT_OK) {
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
