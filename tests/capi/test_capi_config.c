/* The C API's training configuration from plain C99: NULL arguments and dead handles, file
 * errors that name the file, line and key, and getting, setting, validating and writing back
 * values. Reads examples/configs/tiny.yaml; trains nothing. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "capi/capi_test_support.h"

/* ------------------------------------------------------------------ configuration */

static void config_null_arguments_and_dead_handles(void** state) {
  tft_config* config = NULL;
  tft_checkpoint_config* checkpoint = NULL;
  size_t needed = 7;
  (void)state;
  ASSERT_STATUS(tft_config_create_from_file(NULL, &config), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_config_create_from_file: 'path' is NULL");
  ASSERT_STATUS(tft_config_create_from_file("x.yaml", NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_create_from_yaml(NULL, &config), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_clone(NULL, &config), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_get_value(NULL, "training.epochs", NULL, 0, &needed),
                TFT_ERROR_INVALID_ARGUMENT);
  assert_int_equal(needed, 7);
  ASSERT_STATUS(tft_config_set_value(NULL, "training.epochs", "3"), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_validate(NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_to_yaml(NULL, NULL, 0, &needed), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_get_checkpoint(NULL, &checkpoint), TFT_ERROR_INVALID_ARGUMENT);
  assert_null(config);
  assert_null(checkpoint);

  config = load_tiny_config("/tmp/unused");
  ASSERT_STATUS(tft_config_get_value(config, NULL, NULL, 0, &needed), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_set_value(config, "training.epochs", NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_config_set_checkpoint(config, NULL), TFT_ERROR_INVALID_ARGUMENT);
  /* A handle of another type is not a config, nor the other way round. */
  ASSERT_OK(tft_checkpoint_config_create_none(&checkpoint));
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
  ASSERT_STATUS(tft_config_create_from_file("/nonexistent/tft.yaml", &config), TFT_ERROR_IO);
  ASSERT_ERROR_HAS("/nonexistent/tft.yaml");

  make_scratch_dir(dir, "config");
  snprintf(path, sizeof path, "%s/bad.yaml", dir);
  file = fopen(path, "w");
  assert_non_null(file);
  fputs(
      "data:\n  path: x.csv\n  time_column: t\n  target: y\nwindows:\n"
      "  encoder_length: 8\n  prediction_length: 2\ntraining:\n  epochs: ten\n",
      file);
  fclose(file);
  ASSERT_STATUS(tft_config_create_from_file(path, &config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("bad.yaml:9");
  ASSERT_ERROR_HAS("training.epochs");
  ASSERT_ERROR_HAS("ten");
  assert_null(config);

  ASSERT_STATUS(tft_config_create_from_yaml("training: {epoch: 3}\n", &config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("unknown key 'epoch'");
  ASSERT_STATUS(tft_config_create_from_yaml("data: [unclosed\n", &config), TFT_ERROR_CONFIG);
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

  ASSERT_OK(tft_config_get_value(config, "training.epochs", value, sizeof value, NULL));
  assert_string_equal(value, "2");
  ASSERT_OK(tft_config_get_value(config, "model.quantiles", value, sizeof value, &needed));
  assert_string_equal(value, "[0.1, 0.5, 0.9]");
  assert_int_equal(needed, strlen(value) + 1);
  ASSERT_STATUS(tft_config_get_value(config, "model.quantiles", small, sizeof small, &needed),
                TFT_ERROR_BUFFER_TOO_SMALL);
  assert_string_equal(small, "[0");
  ASSERT_STATUS(tft_config_get_value(config, "training.epoch", value, sizeof value, NULL),
                TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("unknown key 'epoch'");

  /* A wrong type leaves the value as it was. */
  ASSERT_STATUS(tft_config_set_value(config, "training.epochs", "ten"), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("training.epochs: expected a positive integer, got \"ten\"");
  ASSERT_OK(tft_config_get_value(config, "training.epochs", value, sizeof value, NULL));
  assert_string_equal(value, "2");
  ASSERT_OK(tft_config_set_value(config, "training.epochs", "5"));
  ASSERT_OK(tft_config_get_value(config, "training.epochs", value, sizeof value, NULL));
  assert_string_equal(value, "5");

  /* Setters check types; validate checks the rules. */
  ASSERT_OK(tft_config_set_value(config, "split.validation_steps", "3"));
  ASSERT_STATUS(tft_config_validate(config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("split.validation_steps");
  ASSERT_OK(tft_config_set_value(config, "split.validation_steps", "56"));
  ASSERT_OK(tft_config_validate(config));

  /* Quantization-aware training is configured by its dotted keys, like every training key. */
  ASSERT_OK(tft_config_set_value(config, "training.qat.enabled", "true"));
  ASSERT_OK(tft_config_set_value(config, "training.qat.activation_bits", "6"));
  ASSERT_OK(tft_config_get_value(config, "training.qat", value, sizeof value, NULL));
  assert_string_equal(value,
                      "{enabled: true, start_epoch: 1, weight_bits: 8, activation_bits: 6, "
                      "freeze_observers_epoch: 0}");
  ASSERT_OK(tft_config_validate(config));
  ASSERT_OK(tft_config_set_value(config, "training.qat.weight_bits", "12"));
  ASSERT_STATUS(tft_config_validate(config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("training.qat.weight_bits: must be in [2, 8] (got 12)");
  ASSERT_OK(tft_config_set_value(config, "training.qat", "{enabled: false}"));
  ASSERT_OK(tft_config_validate(config));

  /* Mixed precision is a dotted key too; what cannot run on this device fails validation. */
  ASSERT_OK(tft_config_get_value(config, "training.precision", value, sizeof value, NULL));
  assert_string_equal(value, "32");
  ASSERT_OK(tft_config_set_value(config, "training.precision", "bf16-mixed"));
  ASSERT_OK(tft_config_get_value(config, "training.precision", value, sizeof value, NULL));
  assert_string_equal(value, "bf16-mixed");
  ASSERT_OK(tft_config_validate(config));
  ASSERT_STATUS(tft_config_set_value(config, "training.precision", "fp16"), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("training.precision: unknown value \"fp16\"");
  ASSERT_OK(tft_config_set_value(config, "training.precision", "16-mixed"));
  ASSERT_STATUS(tft_config_validate(config), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("16-mixed needs a CUDA device");
  ASSERT_OK(tft_config_set_value(config, "training.precision", "32"));
  ASSERT_OK(tft_config_validate(config));

  /* checkpoint.memory_budget: a dotted key like the others; auto on either device. */
  ASSERT_OK(tft_config_get_value(config, "checkpoint.memory_budget", value, sizeof value, NULL));
  assert_string_equal(value, "null");
  ASSERT_STATUS(tft_config_set_value(config, "checkpoint.memory_budget", "3.5GB"),
                TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("checkpoint.memory_budget: unknown unit 'GB' in \"3.5GB\"");
  ASSERT_STATUS(tft_config_set_value(config, "checkpoint.memory_budget", "3.5GiB"),
                TFT_ERROR_CONFIG); /* this config's strategy is uniform */
  ASSERT_ERROR_HAS("strategy 'uniform' fixes the units to checkpoint, and a budget plans them");
  ASSERT_OK(tft_config_set_value(config, "checkpoint", "{memory_budget: 3.5GiB}"));
  ASSERT_OK(tft_config_get_value(config, "checkpoint.memory_budget", value, sizeof value, NULL));
  assert_string_equal(value, "3584MiB");
  ASSERT_OK(tft_config_validate(config));
  ASSERT_OK(tft_config_set_value(config, "checkpoint.memory_budget", "auto"));
  ASSERT_OK(tft_config_validate(config));
  ASSERT_OK(tft_config_set_value(config, "checkpoint.memory_budget", "null"));
  ASSERT_OK(tft_config_validate(config));

  /* The checkpoint section, as a handle. */
  ASSERT_OK(tft_checkpoint_config_create_uniform(2, &checkpoint));
  ASSERT_OK(tft_config_set_checkpoint(config, checkpoint));
  tft_checkpoint_config_free(checkpoint);
  checkpoint = NULL;
  ASSERT_OK(tft_config_get_value(config, "checkpoint.interval", value, sizeof value, NULL));
  assert_string_equal(value, "2");
  ASSERT_OK(tft_config_get_checkpoint(config, &checkpoint));
  ASSERT_OK(tft_checkpoint_config_get_should_checkpoint(checkpoint, 1, &flag));
  assert_int_equal(flag, 0);
  ASSERT_OK(tft_checkpoint_config_get_should_checkpoint(checkpoint, 2, &flag));
  assert_int_equal(flag, 1);
  tft_checkpoint_config_free(checkpoint);

  /* YAML out and back in gives the same configuration. */
  ASSERT_OK(tft_config_to_yaml(config, NULL, 0, &needed));
  yaml = malloc(needed);
  assert_non_null(yaml);
  ASSERT_OK(tft_config_to_yaml(config, yaml, needed, NULL));
  assert_non_null(strstr(yaml, "epochs: 5"));
  ASSERT_OK(tft_config_create_from_yaml(yaml, &back));
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_null_arguments_and_dead_handles),
      cmocka_unit_test(config_file_errors_name_file_line_and_key),
      cmocka_unit_test(config_get_set_validate_and_round_trip),
  };
  return cmocka_run_group_tests_name("capi_config", tests, NULL, NULL);
}
