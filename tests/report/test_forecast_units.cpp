// Forecasts in original units (report/forecast_units.h): the median rounded to a whole number
// and kept between its neighbours, and a run on counts whose every forecast, the trainer's and
// the saved model's, has a whole-number median inside its interval, where the same run on
// output.median_rounding none has fractions.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "report/forecast_units.h"
#include "store/saved_model.h"
#include "train/trainer.h"

#include "support/cmocka_cpp.h"
#include "train/train_test_support.h"

namespace {

bool same(const torch::Tensor& a, const std::vector<float>& expected) {
  const torch::Tensor e = torch::tensor(expected).view(a.sizes());
  return torch::equal(a, e);
}

// Three series of Poisson counts around a daily-like cycle of 12 rows.
std::string counts_csv() {
  std::mt19937_64 rng(99);
  std::string text = "series,group,t,season_sin,season_cos,lagged,y\n";
  const double pi = 3.14159265358979323846;
  for (int s = 0; s < 3; ++s) {
    int previous = 0;
    for (int t = 0; t < 120; ++t) {
      const double angle = 2 * pi * t / 12.0;
      std::poisson_distribution<int> draw(2.0 + s + 1.5 * (1.0 + std::sin(angle)));
      const int y = draw(rng);
      text += std::string(1, static_cast<char>('a' + s)) + "," + (s == 2 ? "odd" : "even") + "," +
              std::to_string(t) + "," + std::to_string(std::sin(angle)) + "," +
              std::to_string(std::cos(angle)) + "," + std::to_string(previous) + "," +
              std::to_string(y) + "\n";
      previous = y;
    }
  }
  return text;
}

struct MedianCheck {
  std::size_t forecasts = 0, fractions = 0, outside = 0;
};

MedianCheck check_medians(const tft::Predictions& p) {
  const std::size_t q = p.quantiles.size();
  MedianCheck c;
  for (const tft::Forecast& f : p.forecasts) {
    for (std::int64_t h = 0; h < p.prediction_length; ++h) {
      const auto step = static_cast<std::size_t>(h);
      const float lo = f.value(step, 0, q), median = f.value(step, 1, q), hi = f.value(step, 2, q);
      ++c.forecasts;
      if (std::nearbyint(median) != median) ++c.fractions;
      if (median < lo || median > hi) ++c.outside;
    }
  }
  return c;
}

}  // namespace

TFT_TEST(the_median_rounds_and_stays_between_its_neighbours) {
  const std::vector<double> quantiles = {0.1, 0.5, 0.9};
  // Rounded (ties to even, negatives too); held up by P10 and down by P90 where rounding would
  // cross them; the other quantiles untouched.
  const torch::Tensor forecast = torch::tensor({0.2f, 0.4f, 3.0f,    //  0.4 -> 0, below P10: 0.2
                                                1.0f, 2.6f, 2.7f,    //  2.6 -> 3, above P90: 2.7
                                                -4.0f, -2.6f, 1.0f,  // -2.6 -> -3
                                                0.0f, 2.5f, 9.0f,    //  2.5 -> 2 (to even)
                                                5.0f, 7.49f, 8.0f})  //  7.49 -> 7
                                     .view({1, 5, 3});
  const torch::Tensor rounded = tft::round_median_to_whole_numbers(forecast, quantiles);
  assert_true(same(rounded, {0.2f, 0.2f, 3.0f, 1.0f, 2.7f, 2.7f, -4.0f, -3.0f, 1.0f, 0.0f, 2.0f,
                             9.0f, 5.0f, 7.0f, 8.0f}));
  assert_true(same(forecast, {0.2f, 0.4f, 3.0f, 1.0f, 2.6f, 2.7f, -4.0f, -2.6f, 1.0f, 0.0f, 2.5f,
                              9.0f, 5.0f, 7.49f, 8.0f}));  // the input is not modified

  // The median alone, or at an end of the list: only the neighbour there is a bound.
  assert_true(same(tft::round_median_to_whole_numbers(torch::tensor({1.6f}).view({1, 1, 1}), {0.5}),
                   {2.0f}));
  assert_true(same(
      tft::round_median_to_whole_numbers(torch::tensor({0.3f, 0.45f}).view({1, 1, 2}), {0.1, 0.5}),
      {0.3f, 0.3f}));
  // Without a 0.5 quantile nothing changes.
  const torch::Tensor no_median = torch::tensor({0.3f, 1.6f}).view({1, 1, 2});
  assert_true(torch::equal(tft::round_median_to_whole_numbers(no_median, {0.1, 0.9}), no_median));
}

TFT_TEST(forecasts_of_counts_have_whole_number_medians) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "tft_test_forecast_units";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path csv = dir / "counts.csv";
  std::ofstream(csv) << counts_csv();

  tft::TrainConfig config = tft::testing::synthetic_config(csv, dir / "whole");
  config.training.epochs = 3;
  tft::Trainer trainer(config);
  const tft::TrainReport report = trainer.train();
  assert_true(report.whole_number_median);
  const tft::Predictions from_trainer = trainer.predict();
  const MedianCheck whole = check_medians(from_trainer);
  assert_true(whole.forecasts > 100);
  assert_int_equal(whole.outside, 0);
  // Where P10 and P90 hold no whole number the median stays inside, a fraction; counts around
  // 2-6 leave that rare.
  assert_true(whole.fractions * 20 < whole.forecasts);
  tft::SavedModel saved = tft::SavedModel::load(dir / "whole" / "model");
  assert_true(saved.transforms().whole_number_median);
  assert_true(
      tft::testing::forecasts_bitwise_equal(saved.predict(trainer.dataset()), from_trainer));

  config.output.median_rounding = tft::MedianRounding::None;
  config.output.directory = (dir / "none").string();
  tft::Trainer unrounded(config);
  assert_false(unrounded.train().whole_number_median);
  const MedianCheck fractions = check_medians(unrounded.predict());
  assert_true(fractions.fractions * 2 > fractions.forecasts);
  std::filesystem::remove_all(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_median_rounds_and_stays_between_its_neighbours),
      cmocka_unit_test(forecasts_of_counts_have_whole_number_medians),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
