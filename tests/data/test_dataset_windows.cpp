// Windows over a TimeSeriesDataset: the time split (asserted on indices: no leakage), windows
// appended directly, and deterministic sampling into batches.
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "data/window_sampler.h"

#include "dataset_support.h"
#include "support/cmocka_cpp.h"

using tft::TimeSeriesDataset;
using tft::TrainConfig;
using tft::Window;
using namespace tft_test;

// ---------------------------------------------------------------------------------------
// Windows and split

TFT_TEST(test_windows_and_split_do_not_leak) {
  TrainConfig c = base_config();
  c.windows.encoder_length = 4;
  c.windows.prediction_length = 2;
  c.split.validation_steps = 4;
  const int lengths[] = {20, 15, 12};
  std::string text = "g,t,y\n";
  // Interleave the series in the file to exercise regrouping.
  for (int t = 0; t < 20; ++t) {
    for (int s = 0; s < 3; ++s) {
      if (t < lengths[s])
        text += std::string(1, static_cast<char>('A' + s)) + "," + std::to_string(t) + "," +
                std::to_string(t * (s + 1)) + "\n";
    }
  }
  for (const std::int64_t stride : {1, 3}) {
    c.windows.stride = stride;
    const TimeSeriesDataset ds = load(text, c);
    assert_int_equal(ds.series().size(), 3);
    const std::int64_t span = 6;
    std::vector<std::set<std::int64_t>> validated(3);
    std::vector<std::size_t> train_count(3, 0);
    for (const Window& w : ds.training_windows()) {
      const tft::SeriesInfo& s = ds.series()[w.series];
      assert_true(s.train_rows == s.length - 4);
      // Every row of a training window, decoder targets included, is a training row.
      assert_true(static_cast<std::int64_t>(w.start) + span <= s.train_rows);
      assert_int_equal(w.start % stride, 0);
      ++train_count[w.series];
    }
    for (const Window& w : ds.validation_windows()) {
      const tft::SeriesInfo& s = ds.series()[w.series];
      const std::int64_t decoder_start = w.start + 4;
      assert_true(decoder_start >= s.train_rows);  // targets only from the validation part
      assert_true(static_cast<std::int64_t>(w.start) + span <= s.length);
      for (std::int64_t r = decoder_start; r < decoder_start + 2; ++r) {
        validated[w.series].insert(r);
      }
    }
    for (std::size_t s = 0; s < 3; ++s) {
      const std::int64_t b = lengths[s] - 4;
      // Training windows: starts 0, stride, ... with start + 6 <= b.
      assert_int_equal(train_count[s], static_cast<std::size_t>((b - span) / stride + 1));
      if (stride == 1) {
        // Every validation row is a target of some validation window.
        assert_int_equal(validated[s].size(), 4);
        assert_int_equal(*validated[s].begin(), b);
      }
    }
    // Decoder times of windows come from the right series rows.
    assert_int_equal(ds.times()[static_cast<std::size_t>(ds.series()[2].offset)], 0);
    assert_int_equal(ds.real_column("y")[static_cast<std::size_t>(ds.series()[2].offset) + 3], 9);
  }

  // validation_fraction: floor(0.25 * 20) = 5 rows.
  c.windows.stride = 1;
  c.split.validation_steps.reset();
  c.split.validation_fraction = 0.25;
  const TimeSeriesDataset frac = load(text, c);
  assert_int_equal(frac.series()[0].train_rows, 15);
  assert_int_equal(frac.series()[1].train_rows, 12);  // 15 - floor(3.75)
  assert_int_equal(frac.series()[2].train_rows, 9);
  // No validation at all: every window is a training window.
  c.split.validation_fraction = 0.0;
  const TimeSeriesDataset all = load(text, c);
  assert_int_equal(all.validation_windows().size(), 0);
  assert_int_equal(all.training_windows().size(), (20 - 5) + (15 - 5) + (12 - 5));
}

TFT_TEST(test_append_series_windows_directly) {
  tft::WindowConfig w;
  w.encoder_length = 3;
  w.prediction_length = 2;
  w.stride = 1;
  std::vector<Window> train;
  std::vector<Window> valid;
  tft::append_series_windows(7, 10, 7, w, train, valid);
  assert_int_equal(train.size(), 3);  // starts 0, 1, 2 (2 + 5 = 7)
  assert_int_equal(train.back().start, 2);
  assert_int_equal(train.back().series, 7);
  assert_int_equal(valid.size(), 2);  // decoder starts 7 and 8: starts 4 and 5
  assert_int_equal(valid.front().start, 4);
  assert_int_equal(valid.back().start, 5);
  // Training part shorter than the encoder: validation windows start at 0.
  train.clear();
  valid.clear();
  tft::append_series_windows(0, 6, 2, w, train, valid);
  assert_int_equal(train.size(), 0);
  assert_int_equal(valid.size(), 2);
  assert_int_equal(valid.front().start, 0);
  tft::SplitConfig split;
  assert_int_equal(tft::validation_rows(10, split), 2);
  split.validation_fraction.reset();
  split.validation_steps = 4;
  assert_int_equal(tft::validation_rows(10, split), 4);
}

// ---------------------------------------------------------------------------------------
// Sampling

TFT_TEST(test_deterministic_sampling) {
  std::vector<Window> windows;
  for (std::uint32_t i = 0; i < 100; ++i) windows.push_back(Window{i % 7, i});
  const tft::WindowSampler sampler(windows, 32, true, 42);
  assert_int_equal(sampler.num_batches(), 4);
  const auto e0 = sampler.epoch_order(0);
  const auto e0_again = tft::WindowSampler(windows, 32, true, 42).epoch_order(0);
  const auto e1 = sampler.epoch_order(1);
  assert_true(e0 == e0_again);
  assert_true(e0 != e1);
  assert_true(e0 != windows);
  assert_true(tft::WindowSampler(windows, 32, true, 43).epoch_order(0) != e0);
  // A permutation: every window exactly once.
  for (const auto& order : {e0, e1}) {
    std::vector<std::uint32_t> starts;
    for (const Window& w : order) starts.push_back(w.start);
    std::sort(starts.begin(), starts.end());
    for (std::uint32_t i = 0; i < 100; ++i) assert_int_equal(starts[i], i);
  }
  // The same sequence on every platform (mt19937_64, seed_seq and the shuffle are fully
  // specified): pinned values.
  const std::uint32_t pinned[] = {52, 73, 49, 12};
  for (std::size_t i = 0; i < 4; ++i) assert_int_equal(e0[i].start, pinned[i]);
  const auto batches = sampler.epoch_batches(3);
  assert_int_equal(batches.size(), 4);
  assert_int_equal(batches[0].size(), 32);
  assert_int_equal(batches[3].size(), 4);
  assert_true(batches[0][0] == sampler.epoch_order(3)[0]);
  // Unshuffled: the given order.
  assert_true(tft::WindowSampler(windows, 10, false, 42).epoch_order(5) == windows);
  TFT_ASSERT_THROWS_WITH(tft::WindowSampler(windows, 0, true, 1), tft::ConfigError,
                         "training.batch_size: must be at least 1 (got 0)");

  std::mt19937_64 rng(7);
  std::vector<int> counts(3, 0);
  for (int i = 0; i < 3000; ++i) ++counts[tft::uniform_below(rng, 3)];
  for (int n : counts) assert_true(n > 900 && n < 1100);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_windows_and_split_do_not_leak),
      cmocka_unit_test(test_append_series_windows_directly),
      cmocka_unit_test(test_deterministic_sampling),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
