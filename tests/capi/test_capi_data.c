/* Data in memory through the C API (tft_data, the Arrow C stream interface), from plain C99
 * with a hand-built stream (arrow_producer.h): training from the stream ends bitwise like
 * training from the same rows in a CSV file, its forecasts equal the file run's forecast.csv
 * and come out as an Arrow stream; every bad input is a clear error, and the stream's release
 * runs exactly once, the arrays' once each. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "capi/arrow_producer.h"
#include "capi/capi_test_support.h"

static const char* kConfig =
    "data: {time_column: t, group_columns: [origin], target: y}\n"
    "windows: {encoder_length: 5, prediction_length: 2}\n"
    "split: {validation_steps: 4}\n"
    "model: {hidden_size: 8, attention_heads: 2}\n"
    "training: {epochs: 2, batch_size: 8, seed: 1, threads: 1}\n";

static tft_config* config_for(const char* output, const char* data_path) {
  tft_config* config = NULL;
  char quoted[320];
  ASSERT_OK(tft_config_create_from_yaml(kConfig, &config));
  snprintf(quoted, sizeof quoted, "\"%s\"", output);
  ASSERT_OK(tft_config_set_value(config, "output.directory", quoted));
  if (data_path != NULL) {
    snprintf(quoted, sizeof quoted, "\"%s\"", data_path);
    ASSERT_OK(tft_config_set_value(config, "data.path", quoted));
  }
  return config;
}

static tft_data* data_of(producer* p) {
  tft_data* data = NULL;
  struct ArrowArrayStream stream = producer_stream(p);
  ASSERT_OK(tft_data_create_from_arrow_stream(&stream, &data));
  assert_null(stream.release);
  assert_int_equal(p->stream_releases, 1);
  return data;
}

static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  long n;
  char* text;
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = (char*)calloc((size_t)n + 1, 1);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  return text;
}

static void same_file(const char* a, const char* b) {
  char* x = read_file(a);
  char* y = read_file(b);
  assert_string_equal(x, y);
  free(x);
  free(y);
}

/* The series column is renamed, not doubled (report/series_columns.h). */
static void expect_first_line(const char* path, const char* expected) {
  char line[256] = {0};
  FILE* f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  line[strcspn(line, "\n")] = '\0';
  assert_string_equal(line, expected);
}

static void train_from_memory_like_from_csv(void** state) {
  char dir[256], path[300], out_a[300], out_b[300], csv_a[300], csv_b[300], model[320];
  producer p;
  tft_data* data;
  tft_config *memory_config, *file_config;
  tft_trainer *memory_trainer = NULL, *file_trainer = NULL;
  tft_train_report *ra = NULL, *rb = NULL;
  struct run_result a, b;
  tft_predictions *pa = NULL, *pb = NULL, *pm = NULL;
  tft_model* saved = NULL;
  struct ArrowArrayStream forecasts;
  struct ArrowSchema schema;
  struct ArrowArray batch;
  size_t n_forecasts = 0, horizon = 0, quantiles = 0, i, q;
  float* values;
  int64_t rows = 0;
  (void)state;
  make_scratch_dir(dir, "data");
  snprintf(path, sizeof path, "%s/rows.csv", dir);
  producer_write_csv(path);
  snprintf(out_a, sizeof out_a, "%s/memory", dir);
  snprintf(out_b, sizeof out_b, "%s/file", dir);
  memory_config = config_for(out_a, NULL); /* no data.path: the data comes in memory */
  file_config = config_for(out_b, path);

  producer_init(&p);
  data = data_of(&p);
  ASSERT_OK(tft_data_get_num_rows(data, &rows));
  assert_int_equal(rows, 60);
  ASSERT_OK(tft_trainer_create_from_data(memory_config, data, &memory_trainer));
  ASSERT_OK(tft_trainer_create(file_config, &file_trainer));
  ASSERT_OK(tft_trainer_train(memory_trainer, &ra));
  ASSERT_OK(tft_trainer_train(file_trainer, &rb));
  ASSERT_OK(read_report(ra, &a));
  ASSERT_OK(read_report(rb, &b));
  printf("  final loss: memory %.17g, csv %.17g\n", a.summary.final_validation_loss,
         b.summary.final_validation_loss);
  assert_memory_equal(&a.summary.final_validation_loss, &b.summary.final_validation_loss,
                      sizeof(double));
  assert_memory_equal(&a.summary.final_train_loss, &b.summary.final_train_loss, sizeof(double));

  /* Forecasts of the data in memory equal the file run's forecast.csv. */
  snprintf(csv_a, sizeof csv_a, "%s/memory/forecast.csv", dir);
  snprintf(csv_b, sizeof csv_b, "%s/file/forecast.csv", dir);
  same_file(csv_a, csv_b);
  expect_first_line(csv_b, "kind,series_origin,origin,time,horizon,q0.1,q0.5,q0.9,actual");
  ASSERT_OK(tft_trainer_predict_data(memory_trainer, data, &pa));
  snprintf(csv_a, sizeof csv_a, "%s/predict_data.csv", dir);
  ASSERT_OK(tft_predictions_write_csv(pa, csv_a));
  same_file(csv_a, csv_b);
  snprintf(model, sizeof model, "%s/model", out_a);
  ASSERT_OK(tft_model_create_from_directory(model, &saved));
  ASSERT_OK(tft_model_predict_data(saved, data, &pm));
  ASSERT_OK(tft_predictions_write_csv(pm, csv_a));
  same_file(csv_a, csv_b);
  /* A model trained from memory has no data.path to fall back on. */
  ASSERT_STATUS(tft_model_predict(saved, NULL, &pb), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("data.path");
  tft_data_free(data);

  /* Forecasts out as an Arrow stream: forecast.csv's columns, typed. */
  ASSERT_OK(tft_trainer_predict(file_trainer, &pb));
  ASSERT_OK(tft_predictions_to_arrow_stream(pb, &forecasts));
  ASSERT_OK(tft_predictions_get_shape(pb, &n_forecasts, &horizon, &quantiles));
  values = (float*)calloc(n_forecasts * horizon * quantiles, sizeof(float));
  ASSERT_OK(tft_predictions_get_values(pb, values, n_forecasts * horizon * quantiles, NULL));
  tft_predictions_free(pb); /* the stream holds its own copy */
  assert_int_equal(forecasts.get_schema(&forecasts, &schema), 0);
  assert_int_equal(schema.n_children, 5 + (int64_t)quantiles + 1);
  {
    const char* names[] = {"kind", "series_origin", "origin", "time",  "horizon",
                           "q0.1", "q0.5",          "q0.9",   "actual"};
    const char* formats[] = {"u", "u", "l", "l", "l", "g", "g", "g", "g"};
    for (i = 0; i < 9; ++i) {
      assert_string_equal(schema.children[i]->name, names[i]);
      assert_string_equal(schema.children[i]->format, formats[i]);
    }
  }
  schema.release(&schema);
  assert_int_equal(forecasts.get_next(&forecasts, &batch), 0);
  assert_int_equal(batch.length, (int64_t)(n_forecasts * horizon));
  for (q = 0; q < quantiles; ++q) {
    const double* column = (const double*)batch.children[5 + q]->buffers[1];
    for (i = 0; i < n_forecasts * horizon; ++i) {
      assert_true(column[batch.children[5 + q]->offset + (int64_t)i] ==
                  (double)values[i * quantiles + q]);
    }
  }
  batch.release(&batch);
  assert_int_equal(forecasts.get_next(&forecasts, &batch), 0);
  assert_null(batch.release); /* the end */
  forecasts.release(&forecasts);
  free(values);

  assert_int_equal(p.arrays_alive, 0); /* every batch released once, when the data went */
  tft_predictions_free(pa);
  tft_predictions_free(pm);
  tft_model_free(saved);
  tft_train_report_free(ra);
  tft_train_report_free(rb);
  tft_trainer_free(memory_trainer);
  tft_trainer_free(file_trainer);
  tft_config_free(memory_config);
  tft_config_free(file_config);
  remove_tree(dir);
}

/* Hands a faulty stream over: the status, the message, one release, no array left alive. */
static void expect_stream_error(producer* p, tft_status status, const char* message) {
  tft_data* data = (tft_data*)0x1;
  struct ArrowArrayStream stream = producer_stream(p);
  ASSERT_STATUS(tft_data_create_from_arrow_stream(&stream, &data), status);
  ASSERT_ERROR_HAS(message);
  assert_true(data == (tft_data*)0x1);
  assert_null(stream.release);
  assert_int_equal(p->stream_releases, 1);
  assert_int_equal(p->arrays_alive, 0);
}

/* Data whose columns are wrong: the stream reads, the trainer says what is wrong. */
static void expect_column_error(producer* p, const char* message) {
  tft_config* config = config_for("/tmp/unused", NULL);
  tft_trainer* trainer = NULL;
  tft_data* data = data_of(p);
  ASSERT_STATUS(tft_trainer_create_from_data(config, data, &trainer), TFT_ERROR_DATA);
  ASSERT_ERROR_HAS(message);
  assert_null(trainer);
  tft_data_free(data);
  assert_int_equal(p->arrays_alive, 0);
  tft_config_free(config);
}

static void bad_input_is_a_clear_error(void** state) {
  producer p;
  struct ArrowArrayStream stream;
  tft_data* data = NULL;
  tft_trainer* trainer = NULL;
  tft_config* config = config_for("/tmp/unused", NULL);
  (void)state;

  ASSERT_STATUS(tft_data_create_from_arrow_stream(NULL, &data), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("'stream' is NULL");
  producer_init(&p);
  stream = producer_stream(&p);
  stream.release = NULL;
  ASSERT_STATUS(tft_data_create_from_arrow_stream(&stream, &data), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("released already");
  assert_int_equal(p.stream_releases, 0);
  /* out NULL: the stream is still taken over, and released once. */
  stream = producer_stream(&p);
  ASSERT_STATUS(tft_data_create_from_arrow_stream(&stream, NULL), TFT_ERROR_INVALID_ARGUMENT);
  assert_null(stream.release);
  assert_int_equal(p.stream_releases, 1);
  /* A stream used twice: the second hand-over finds it released. */
  producer_init(&p);
  stream = producer_stream(&p);
  ASSERT_OK(tft_data_create_from_arrow_stream(&stream, &data));
  ASSERT_STATUS(tft_data_create_from_arrow_stream(&stream, &data), TFT_ERROR_INVALID_ARGUMENT);
  assert_int_equal(p.stream_releases, 1);
  tft_data_free(data);

  producer_init(&p);
  p.fail_schema = 1;
  expect_stream_error(&p, TFT_ERROR_DATA,
                      "arrow stream: cannot read the stream's schema: no "
                      "schema here");
  producer_init(&p);
  p.fail_batch = 2; /* rows 0-31 came in two batches */
  expect_stream_error(&p, TFT_ERROR_DATA,
                      "arrow stream: row 32: the stream failed: the cursor "
                      "died");
  producer_init(&p);
  p.total_rows = 0;
  expect_stream_error(&p, TFT_ERROR_DATA, "arrow stream: the stream holds no rows");

  producer_init(&p);
  p.omit_y = 1;
  expect_column_error(&p, "arrow stream: column 'y': not in the header");
  producer_init(&p);
  p.y_binary = 1;
  expect_column_error(&p, "arrow stream: column 'y': the Arrow type binary is not supported");
  producer_init(&p);
  p.y_null_row = 20;
  expect_column_error(&p, "arrow stream: row 20: column 'y': null value");

  ASSERT_STATUS(tft_trainer_create_from_data(config, NULL, &trainer), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("'data' is NULL");
  ASSERT_STATUS(tft_trainer_create(config, &trainer), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("tft_trainer_create_from_data");
  ASSERT_STATUS(tft_predictions_to_arrow_stream(NULL, &stream), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_data_get_num_rows(NULL, NULL), TFT_ERROR_INVALID_ARGUMENT);
  tft_data_free(NULL);
  tft_config_free(config);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(train_from_memory_like_from_csv),
      cmocka_unit_test(bad_input_is_a_clear_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
