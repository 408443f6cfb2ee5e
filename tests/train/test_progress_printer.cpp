// The tft-train runner's progress printer (examples/tft_train): one plain line per epoch
// away from a terminal, with the baselines' q-risk beside the model's.
#include <algorithm>
#include <cstdio>
#include <string>

#include "tft_train/progress_printer.h"

#include "support/cmocka_cpp.h"

TFT_TEST(test_plain_progress_prints_epochs_only) {
  std::FILE* file = std::tmpfile();
  tft::ProgressPrinter plain(file, /*terminal=*/false);
  tft::TrainProgress step;
  step.epoch = 1;
  step.epochs = 2;
  step.step = 1;
  step.steps = 3;
  assert_true(plain(step));
  tft::EpochMetrics m;
  m.epoch = 1;
  m.train_loss = 0.5;
  m.validation.loss = 0.25;
  m.validation.q_risk_p50 = 0.1;
  m.validation.interval_coverage = 0.786;
  tft::BaselineScores baselines;
  baselines.naive.q_risk_p50 = 0.1881;
  baselines.naive.windows = 4;
  baselines.seasonal_naive.q_risk_p50 = 0.125;
  baselines.seasonal_naive.windows = 4;
  tft::TrainProgress epoch = step;
  epoch.kind = tft::TrainProgress::Kind::Epoch;
  epoch.metrics = &m;
  epoch.baselines = &baselines;
  assert_true(plain(epoch));
  std::rewind(file);
  char buf[512] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, file);
  std::fclose(file);
  const std::string text(buf, n);
  assert_true(text.rfind("epoch 1/2  train 0.5000  val 0.2500  q-risk P50 0.1000 (naive 0.1881, "
                         "seasonal 0.1250)  coverage 79%",
                         0) == 0);
  assert_int_equal(std::count(text.begin(), text.end(), '\n'), 1);  // steps print nothing
  assert_true(text.find('\r') == std::string::npos);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_progress_prints_epochs_only),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
