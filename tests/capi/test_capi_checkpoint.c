/* The C API's version, error and checkpoint-configuration functions, from plain C99:
 * every function, NULL and bad arguments, and the table of the estimates' values. */
#define _XOPEN_SOURCE 700 /* capi_test_support.h: mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "capi/capi_test_support.h"

static void version_matches_the_macros(void** state) {
  int major = -1, minor = -1, patch = -1;
  char expected[32];
  (void)state;
  tft_version(&major, &minor, &patch);
  assert_int_equal(major, TFTRAIN_VERSION_MAJOR);
  assert_int_equal(minor, TFTRAIN_VERSION_MINOR);
  assert_int_equal(patch, TFTRAIN_VERSION_PATCH);
  snprintf(expected, sizeof expected, "%d.%d.%d", major, minor, patch);
  assert_string_equal(tft_version_string(), expected);
  assert_string_equal(tft_version_string(), TFTRAIN_VERSION_STRING);
  /* The generated header carries project(tftrain VERSION ...) of CMakeLists.txt. */
  assert_string_equal(TFTRAIN_VERSION_STRING, TFT_PROJECT_VERSION);
  tft_version(NULL, NULL, NULL); /* any pointer may be NULL */
}

static void api_version_is_the_packed_version(void** state) {
  (void)state;
  assert_int_equal(tft_api_version(), TFT_API_VERSION);
  assert_int_equal(TFT_API_VERSION, TFTRAIN_VERSION_MAJOR * 10000 + TFTRAIN_VERSION_MINOR * 100 +
                                        TFTRAIN_VERSION_PATCH);
  assert_true(tft_api_version() > 0);
}

static void status_names(void** state) {
  (void)state;
  assert_string_equal(tft_status_name(TFT_OK), "OK");
  assert_string_equal(tft_status_name(TFT_ERROR_CONFIG), "ERROR_CONFIG");
  assert_string_equal(tft_status_name(TFT_ERROR_OUT_OF_MEMORY), "ERROR_OUT_OF_MEMORY");
  assert_string_equal(tft_status_name((tft_status)42), "UNKNOWN");
  /* Categories are distinct negative numbers. */
  assert_true(TFT_ERROR_INVALID_ARGUMENT < 0 && TFT_ERROR_INTERNAL < 0);
  assert_true(TFT_ERROR_CONFIG != TFT_ERROR_DATA && TFT_ERROR_IO != TFT_ERROR_NUMERICAL);
}

static void null_arguments_are_errors_not_crashes(void** state) {
  tft_checkpoint_config* cfg = NULL;
  int flag = 7;
  double value = 7.0;
  size_t size = 7;
  tft_checkpoint_strategy strategy;
  (void)state;
  ASSERT_STATUS(tft_checkpoint_config_create_uniform(2, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("tft_checkpoint_config_create_uniform: 'out' is NULL");
  ASSERT_STATUS(tft_checkpoint_config_create_selective(NULL, 2, &cfg), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("'layers' is NULL");
  assert_null(cfg); /* out untouched on failure */
  ASSERT_STATUS(tft_checkpoint_config_get_should_checkpoint(NULL, 0, &flag),
                TFT_ERROR_INVALID_ARGUMENT);
  assert_int_equal(flag, 7);
  ASSERT_STATUS(tft_checkpoint_config_get_memory_savings(NULL, 6, &value),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_get_compute_overhead(NULL, 6, &value),
                TFT_ERROR_INVALID_ARGUMENT);
  assert_true(value == 7.0);
  ASSERT_STATUS(tft_checkpoint_config_validate(NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_get_summary(NULL, NULL, 0, &size),
                TFT_ERROR_INVALID_ARGUMENT);
  assert_int_equal(size, 7);
  ASSERT_STATUS(tft_checkpoint_config_create_from_yaml(NULL, &cfg), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_create_from_json(NULL, &cfg), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_set_checkpoint_ffn(NULL, 1), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_set_checkpoint_attention(NULL, 1),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_set_min_interval(NULL, 1), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_get_strategy(NULL, &strategy), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_clone(NULL, &cfg), TFT_ERROR_INVALID_ARGUMENT);

  ASSERT_OK(tft_checkpoint_config_create_none(&cfg));
  ASSERT_STATUS(tft_checkpoint_config_get_should_checkpoint(cfg, 0, NULL),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_get_strategy(cfg, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_get_min_interval(cfg, NULL), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_STATUS(tft_checkpoint_config_get_summary(cfg, NULL, 4, &size), TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("'buf' is NULL but 'len' is 4");
  tft_checkpoint_config_free(cfg);
  tft_checkpoint_config_free(NULL);
}

static void freed_handle_is_detected(void** state) {
  tft_checkpoint_config* cfg = NULL;
  tft_checkpoint_config* other = NULL;
  int flag = 0;
  (void)state;
  ASSERT_OK(tft_checkpoint_config_create_uniform(2, &cfg));
  /* Keep a second live allocation so the freed block is not trivially reused. */
  ASSERT_OK(tft_checkpoint_config_create_uniform(3, &other));
  tft_checkpoint_config_free(cfg);
  ASSERT_STATUS(tft_checkpoint_config_get_should_checkpoint(cfg, 0, &flag),
                TFT_ERROR_INVALID_ARGUMENT);
  ASSERT_ERROR_HAS("dead handle");
  tft_checkpoint_config_free(cfg); /* a second free is ignored */
  tft_checkpoint_config_free(other);
}

struct formula_row {
  const char* label;
  tft_checkpoint_config* (*make)(void);
  size_t n;
  size_t i;
  int should;
  double savings;
  double overhead;
};

static tft_checkpoint_config* make_uniform2(void) {
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_uniform(2, &c);
  return c;
}
static tft_checkpoint_config* make_uniform3(void) {
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_uniform(3, &c);
  return c;
}
static tft_checkpoint_config* make_uniform0(void) {
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_uniform(0, &c);
  return c;
}
static tft_checkpoint_config* make_selective03(void) {
  const size_t layers[] = {0, 3};
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_selective(layers, 2, &c);
  return c;
}
static tft_checkpoint_config* make_selective_empty(void) {
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_selective(NULL, 0, &c);
  return c;
}
static tft_checkpoint_config* make_dynamic_10_035(void) {
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_dynamic(10, 0.35, &c);
  return c;
}
static tft_checkpoint_config* make_dynamic_6_03_min4(void) {
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_dynamic(6, 0.3, &c);
  tft_checkpoint_config_set_min_interval(c, 4);
  return c;
}
static tft_checkpoint_config* make_none(void) {
  tft_checkpoint_config* c = NULL;
  tft_checkpoint_config_create_none(&c);
  return c;
}

static void estimate_formulas(void** state) {
  /* Expected values computed by hand from shared/seeds/README.md. */
  const struct formula_row rows[] = {
      {"uniform(2) n6 i0", make_uniform2, 6, 0, 1, 1.0 - 3.0 / 6.0, 1.0 + 1.0 / 6.0},
      {"uniform(2) n6 i1", make_uniform2, 6, 1, 0, 1.0 - 3.0 / 6.0, 1.0 + 1.0 / 6.0},
      {"uniform(2) n6 i4", make_uniform2, 6, 4, 1, 1.0 - 3.0 / 6.0, 1.0 + 1.0 / 6.0},
      {"uniform(3) n7 i3", make_uniform3, 7, 3, 1, 1.0 - 3.0 / 7.0, 1.0 + 1.0 / 7.0},
      {"uniform(3) n7 i5", make_uniform3, 7, 5, 0, 1.0 - 3.0 / 7.0, 1.0 + 1.0 / 7.0},
      {"uniform(3) n3 (k >= n)", make_uniform3, 3, 0, 1, 0.0, 1.0},
      {"uniform(2) n1 (k >= n)", make_uniform2, 1, 0, 1, 0.0, 1.0},
      {"uniform(0)", make_uniform0, 6, 0, 0, 0.0, 1.0},
      {"selective{0,3} n6 i3", make_selective03, 6, 3, 1, 1.0 - 2.0 / 6.0, 1.0 + 1.0 / 6.0},
      {"selective{0,3} n6 i2", make_selective03, 6, 2, 0, 1.0 - 2.0 / 6.0, 1.0 + 1.0 / 6.0},
      {"selective{0,3} n10 i0", make_selective03, 10, 0, 1, 1.0 - 2.0 / 10.0, 1.0 + 2.0 / 10.0},
      {"selective{} n6", make_selective_empty, 6, 0, 0, 0.0, 1.0},
      {"dynamic(10,0.35) i3", make_dynamic_10_035, 10, 3, 1, 1.0 - 0.35, 1.0 + 0.65 * 0.3},
      {"dynamic(10,0.35) i4", make_dynamic_10_035, 10, 4, 0, 1.0 - 0.35, 1.0 + 0.65 * 0.3},
      {"dynamic(6,0.3)+min4 i4", make_dynamic_6_03_min4, 6, 4, 1, 1.0 - 0.3, 1.0 + 0.7 * 0.3},
      {"dynamic(6,0.3)+min4 i1", make_dynamic_6_03_min4, 6, 1, 0, 1.0 - 0.3, 1.0 + 0.7 * 0.3},
      {"none", make_none, 6, 0, 0, 0.0, 1.0},
  };
  size_t r;
  (void)state;
  for (r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
    tft_checkpoint_config* cfg = rows[r].make();
    int should = -1;
    double savings = -1, overhead = -1;
    assert_non_null(cfg);
    ASSERT_OK(tft_checkpoint_config_get_should_checkpoint(cfg, rows[r].i, &should));
    ASSERT_OK(tft_checkpoint_config_get_memory_savings(cfg, rows[r].n, &savings));
    ASSERT_OK(tft_checkpoint_config_get_compute_overhead(cfg, rows[r].n, &overhead));
    if (should != rows[r].should || fabs(savings - rows[r].savings) > 1e-12 ||
        fabs(overhead - rows[r].overhead) > 1e-12) {
      fail_msg("%s: got should=%d savings=%.15g overhead=%.15g, want %d %.15g %.15g", rows[r].label,
               should, savings, overhead, rows[r].should, rows[r].savings, rows[r].overhead);
    }
    tft_checkpoint_config_free(cfg);
  }
}

static void constructors_flags_and_validation(void** state) {
  tft_checkpoint_config* cfg = NULL;
  tft_checkpoint_config* copy = NULL;
  tft_checkpoint_strategy strategy = TFT_CHECKPOINT_NONE;
  int attention = -1, ffn = -1;
  size_t min_interval = 0;
  const size_t duplicates[] = {1, 1};
  (void)state;

  ASSERT_OK(tft_checkpoint_config_create_none(&cfg));
  ASSERT_OK(tft_checkpoint_config_get_checkpoint_attention(cfg, &attention));
  ASSERT_OK(tft_checkpoint_config_get_checkpoint_ffn(cfg, &ffn));
  ASSERT_OK(tft_checkpoint_config_get_min_interval(cfg, &min_interval));
  assert_int_equal(attention, 0);
  assert_int_equal(ffn, 0);
  assert_int_equal(min_interval, 1);
  tft_checkpoint_config_free(cfg);

  ASSERT_OK(tft_checkpoint_config_create_dynamic(6, 0.5, &cfg));
  ASSERT_OK(tft_checkpoint_config_get_strategy(cfg, &strategy));
  assert_int_equal(strategy, TFT_CHECKPOINT_DYNAMIC);
  ASSERT_OK(tft_checkpoint_config_get_checkpoint_attention(cfg, &attention));
  assert_int_equal(attention, 1);
  ASSERT_OK(tft_checkpoint_config_set_checkpoint_attention(cfg, 0));
  ASSERT_OK(tft_checkpoint_config_set_checkpoint_ffn(cfg, 0));
  ASSERT_OK(tft_checkpoint_config_clone(cfg, &copy));
  ASSERT_OK(tft_checkpoint_config_get_checkpoint_attention(copy, &attention));
  ASSERT_OK(tft_checkpoint_config_get_checkpoint_ffn(copy, &ffn));
  assert_int_equal(attention, 0);
  assert_int_equal(ffn, 0);
  ASSERT_OK(tft_checkpoint_config_validate(copy));
  ASSERT_OK(tft_checkpoint_config_set_min_interval(copy, 0));
  ASSERT_STATUS(tft_checkpoint_config_validate(copy), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("checkpoint.min_checkpoint_interval: must be at least 1 (got 0)");
  tft_checkpoint_config_free(copy);
  tft_checkpoint_config_free(cfg);

  cfg = NULL;
  ASSERT_STATUS(tft_checkpoint_config_create_dynamic(0, 0.5, &cfg), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("checkpoint.num_layers: must be at least 1 (got 0)");
  ASSERT_STATUS(tft_checkpoint_config_create_dynamic(6, 1.5, &cfg), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("(got 1.5)");
  ASSERT_STATUS(tft_checkpoint_config_create_dynamic(6, NAN, &cfg), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("(got nan)");
  assert_null(cfg);

  ASSERT_OK(tft_checkpoint_config_create_uniform(0, &cfg));
  ASSERT_STATUS(tft_checkpoint_config_validate(cfg), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("checkpoint.interval: must be at least 1 (got 0)");
  tft_checkpoint_config_free(cfg);

  ASSERT_OK(tft_checkpoint_config_create_selective(duplicates, 2, &cfg));
  ASSERT_STATUS(tft_checkpoint_config_validate(cfg), TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("duplicate index 1");
  tft_checkpoint_config_free(cfg);
}

static void summary_with_size_query_and_truncation(void** state) {
  tft_checkpoint_config* cfg = NULL;
  size_t needed = 0;
  char small[8];
  char* big;
  (void)state;
  ASSERT_OK(tft_checkpoint_config_create_dynamic(6, 0.3, &cfg));
  ASSERT_OK(tft_checkpoint_config_get_summary(cfg, NULL, 0, &needed));
  assert_int_equal(needed, strlen("Dynamic checkpointing (6 layers, 30.0% memory target)") + 1);
  big = (char*)test_malloc(needed);
  ASSERT_OK(tft_checkpoint_config_get_summary(cfg, big, needed, NULL));
  assert_string_equal(big, "Dynamic checkpointing (6 layers, 30.0% memory target)");
  test_free(big);
  ASSERT_STATUS(tft_checkpoint_config_get_summary(cfg, small, sizeof small, &needed),
                TFT_ERROR_BUFFER_TOO_SMALL);
  assert_string_equal(small, "Dynamic");
  tft_checkpoint_config_free(cfg);
}

static void yaml_and_json_round_trips_and_errors(void** state) {
  const size_t layers[] = {0, 3};
  tft_checkpoint_config* cfg = NULL;
  tft_checkpoint_config* back = NULL;
  char text[512];
  int flag = -1;
  tft_checkpoint_strategy strategy = TFT_CHECKPOINT_NONE;
  (void)state;
  ASSERT_OK(tft_checkpoint_config_create_selective(layers, 2, &cfg));
  ASSERT_OK(tft_checkpoint_config_set_checkpoint_ffn(cfg, 0));
  ASSERT_OK(tft_checkpoint_config_to_yaml(cfg, text, sizeof text, NULL));
  assert_non_null(strstr(text, "strategy: selective"));
  ASSERT_OK(tft_checkpoint_config_create_from_yaml(text, &back));
  ASSERT_OK(tft_checkpoint_config_get_strategy(back, &strategy));
  assert_int_equal(strategy, TFT_CHECKPOINT_SELECTIVE);
  ASSERT_OK(tft_checkpoint_config_get_should_checkpoint(back, 3, &flag));
  assert_int_equal(flag, 1);
  ASSERT_OK(tft_checkpoint_config_get_checkpoint_ffn(back, &flag));
  assert_int_equal(flag, 0);
  tft_checkpoint_config_free(back);

  ASSERT_OK(tft_checkpoint_config_to_json(cfg, text, sizeof text, NULL));
  ASSERT_OK(tft_checkpoint_config_create_from_json(text, &back));
  ASSERT_OK(tft_checkpoint_config_get_should_checkpoint(back, 0, &flag));
  assert_int_equal(flag, 1);
  tft_checkpoint_config_free(back);
  tft_checkpoint_config_free(cfg);

  back = NULL;
  ASSERT_STATUS(tft_checkpoint_config_create_from_yaml(
                    "strategy: uniform\ninterval: 2\nintervall: 3\n", &back),
                TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("line 3");
  ASSERT_ERROR_HAS("unknown key 'intervall'");
  ASSERT_STATUS(tft_checkpoint_config_create_from_yaml("strategy: [unclosed\n", &back),
                TFT_ERROR_CONFIG);
  ASSERT_STATUS(tft_checkpoint_config_create_from_json("{\"strategy\": 3}", &back),
                TFT_ERROR_CONFIG);
  ASSERT_ERROR_HAS("checkpoint.strategy");
  ASSERT_STATUS(tft_checkpoint_config_create_from_json("{not json", &back), TFT_ERROR_CONFIG);
  assert_null(back);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(version_matches_the_macros),
      cmocka_unit_test(api_version_is_the_packed_version),
      cmocka_unit_test(status_names),
      cmocka_unit_test(null_arguments_are_errors_not_crashes),
      cmocka_unit_test(freed_handle_is_detected),
      cmocka_unit_test(estimate_formulas),
      cmocka_unit_test(constructors_flags_and_validation),
      cmocka_unit_test(summary_with_size_query_and_truncation),
      cmocka_unit_test(yaml_and_json_round_trips_and_errors),
  };
  return cmocka_run_group_tests_name("capi_checkpoint", tests, NULL, NULL);
}
