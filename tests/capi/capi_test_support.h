/* Shared by the C API test programs (plain C99 + POSIX): status assertions, scratch folders,
 * and the tiny training config (examples/configs/tiny.yaml) with its output redirected. */
#ifndef TFT_CAPI_TEST_SUPPORT_H
#define TFT_CAPI_TEST_SUPPORT_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tftrain.h"

#include "support/sanitizers.h" /* TFT_UNDER_ASAN */

#define ASSERT_OK(call)                                                                  \
  do {                                                                                   \
    tft_status status_ = (call);                                                         \
    if (status_ != TFT_OK) {                                                             \
      fail_msg("%s returned %s: %s", #call, tft_status_name(status_), tft_last_error()); \
    }                                                                                    \
  } while (0)
#define ASSERT_STATUS(call, status) assert_int_equal((call), (status))
#define ASSERT_ERROR_HAS(needle)                                              \
  do {                                                                        \
    if (strstr(tft_last_error(), (needle)) == NULL) {                         \
      fail_msg("last error \"%s\" lacks \"%s\"", tft_last_error(), (needle)); \
    }                                                                         \
  } while (0)

/* A fresh folder under $TMPDIR (or /tmp), written to `dir` (room for 256 bytes). */
static inline void make_scratch_dir(char* dir, const char* name) {
  const char* tmp = getenv("TMPDIR");
  snprintf(dir, 256, "%s/tft_capi_%s_XXXXXX", tmp != NULL ? tmp : "/tmp", name);
  if (mkdtemp(dir) == NULL) fail_msg("mkdtemp failed for %s", dir);
}

static inline int remove_entry(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static inline void remove_tree(const char* dir) {
  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline int file_exists(const char* path) { return access(path, F_OK) == 0; }

/* A finished run's figures, read out of its report through the three getters. */
struct run_result {
  tft_train_summary summary;
  tft_metrics validation;
  tft_memory_report memory;
};

static inline tft_status read_report(const tft_train_report* report, struct run_result* out) {
  tft_status status;
  memset(out, 0, sizeof *out);
  out->summary.struct_size = sizeof out->summary;
  out->validation.struct_size = sizeof out->validation;
  out->memory.struct_size = sizeof out->memory;
  status = tft_train_report_get_summary(report, &out->summary);
  if (status == TFT_OK) status = tft_train_report_get_validation(report, &out->validation);
  if (status == TFT_OK) status = tft_train_report_get_memory(report, &out->memory);
  return status;
}

/* examples/configs/tiny.yaml's path into `out`. ctest gives the examples folder in
 * TFT_EXAMPLES_DIR (tft_test_path in tests/CMakeLists.txt): at run time, not compiled in, so that
 * no object file holds the checkout's path and ccache hits across checkouts. */
static inline void tiny_config_path(char* out, size_t size) {
  const char* examples = getenv("TFT_EXAMPLES_DIR");
  if (examples == NULL || *examples == '\0') {
    fail_msg("TFT_EXAMPLES_DIR is not set: run this test through ctest");
  }
  if (snprintf(out, size, "%s/configs/tiny.yaml", examples) >= (int)size) {
    fail_msg("TFT_EXAMPLES_DIR is too long: %s", examples);
  }
}

/* tiny.yaml with output.directory set to `output_dir`. */
static inline tft_config* load_tiny_config(const char* output_dir) {
  tft_config* config = NULL;
  char path[4096], quoted[320];
  tiny_config_path(path, sizeof path);
  ASSERT_OK(tft_config_create_from_file(path, &config));
  snprintf(quoted, sizeof quoted, "\"%s\"", output_dir);
  ASSERT_OK(tft_config_set_value(config, "output.directory", quoted));
  return config;
}

#endif
