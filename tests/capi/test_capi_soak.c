/* A long-lived host's view of the C API, from plain C99: 200 cycles of create -> train ->
 * predict -> free in one process, on tiny.yaml. A service that retrains on a timer does this for
 * months, so whatever a cycle leaves behind (a tensor, a handle, a thread, a cached plan)
 * accumulates. The resident set after the last cycle must be within 8 MiB of the resident set
 * after cycle 3 (the first cycles fill LibTorch's lazily made state: thread pools, kernels,
 * allocator caches), and the last cycle must train bitwise like the first: nothing one cycle
 * does leaks into the next one's numbers.
 *
 * The centre is fixed (`last`) so that each cycle is one short training, not the pilot fits of
 * `center: auto` as well. Skipped under AddressSanitizer, whose quarantine holds freed memory on
 * purpose. TFT_SOAK_CYCLES overrides the count (at least 4). */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi/capi_test_support.h"

enum { kDefaultCycles = 200, kSettledCycle = 3 };
static const double kAllowedGrowthBytes = 8.0 * 1024 * 1024;

/* The resident set now, from /proc/self/statm (its second field, in pages). */
static double resident_bytes(void) {
  unsigned long long size = 0, resident = 0;
  FILE* statm = fopen("/proc/self/statm", "r");
  assert_non_null(statm);
  assert_int_equal(fscanf(statm, "%llu %llu", &size, &resident), 2);
  fclose(statm);
  return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/* One cycle: a trainer from tiny.yaml (centre `last`, one epoch over a quarter of its windows,
 * every unit still checkpointed), trained, asked for its forecasts, and everything freed.
 * Returns the final training loss. */
static double one_cycle(const char* dir) {
  tft_config* config = load_tiny_config(dir);
  tft_trainer* trainer = NULL;
  tft_train_report* report = NULL;
  tft_predictions* predictions = NULL;
  struct run_result result;
  size_t forecasts = 0, horizon = 0, quantiles = 0;
  ASSERT_OK(tft_config_set_value(config, "data.target_normalizer.center", "last"));
  ASSERT_OK(tft_config_set_value(config, "windows.stride", "56"));
  ASSERT_OK(tft_config_set_value(config, "training.epochs", "1"));
  ASSERT_OK(tft_trainer_create(config, &trainer));
  tft_config_free(config);
  ASSERT_OK(tft_trainer_train(trainer, &report));
  ASSERT_OK(read_report(report, &result));
  tft_train_report_free(report);
  ASSERT_OK(tft_trainer_predict(trainer, &predictions));
  ASSERT_OK(tft_predictions_get_shape(predictions, &forecasts, &horizon, &quantiles));
  assert_true(forecasts > 0 && horizon == 7 && quantiles == 3);
  tft_predictions_free(predictions);
  tft_trainer_free(trainer);
  return result.summary.final_train_loss;
}

static void cycles_do_not_grow_the_resident_set(void** state) {
  char dir[256];
  const char* override = getenv("TFT_SOAK_CYCLES");
  const int cycles = override != NULL ? atoi(override) : kDefaultCycles;
  double first_loss = 0.0, settled = 0.0, last = 0.0;
  int cycle;
  (void)state;
#ifdef TFT_UNDER_ASAN
  skip();
#endif
  assert_true(cycles > kSettledCycle);
  make_scratch_dir(dir, "soak");
  for (cycle = 1; cycle <= cycles; ++cycle) {
    const double loss = one_cycle(dir);
    if (cycle == 1) first_loss = loss;
    /* Bitwise: the same config and seed in the same process give the same numbers. */
    assert_memory_equal(&loss, &first_loss, sizeof loss);
    if (cycle == kSettledCycle) settled = resident_bytes();
    if (cycle == kSettledCycle || cycle % 50 == 0 || cycle == cycles) {
      last = resident_bytes();
      printf("soak: cycle %d, resident %.1f MiB (%+.2f MiB since cycle %d)\n", cycle,
             last / 1048576.0, (last - settled) / 1048576.0, kSettledCycle);
      fflush(stdout);
    }
  }
  remove_tree(dir);
  if (last - settled > kAllowedGrowthBytes) {
    fail_msg("the resident set grew by %.2f MiB over cycles %d..%d (allowed %.0f MiB)",
             (last - settled) / 1048576.0, kSettledCycle, cycles, kAllowedGrowthBytes / 1048576.0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cycles_do_not_grow_the_resident_set),
  };
  return cmocka_run_group_tests_name("capi_soak", tests, NULL, NULL);
}
