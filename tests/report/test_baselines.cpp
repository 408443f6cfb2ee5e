// The naive and seasonal-naive baselines (train/baselines.h) against figures computed here from
// the raw values, the seasonality inferred from the time step, and calibration in the metrics.
#include <cmath>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/error.h"
#include "config/train_config.h"
#include "data/time_series_dataset.h"
#include "readers/csv_reader.h"
#include "report/baselines.h"
#include "report/metrics.h"

#include "support/cmocka_cpp.h"

using tft::TimeSeriesDataset;
using tft::TrainConfig;

namespace {

double value_at(int t) { return 10.0 + 0.5 * t + 6.0 * (t % 2); }  // a trend, a period of 2

TrainConfig integer_config() {
  TrainConfig c;
  c.data.path = "y.csv";
  c.data.time_column = "t";
  c.data.target = "y";
  c.windows.encoder_length = 4;
  c.windows.prediction_length = 3;
  c.split.validation_fraction.reset();
  c.split.validation_steps = 6;
  return c;
}

TimeSeriesDataset integer_series(const TrainConfig& c) {
  std::string text = "t,y\n";
  for (int t = 0; t < 20; ++t) text += std::to_string(t) + "," + std::to_string(value_at(t)) + "\n";
  return TimeSeriesDataset::from_reader(tft::CsvReader("y.csv", text), c);
}

// q-risk P50 and P90 of a point forecast `forecast(last, h)` over the validation windows.
std::pair<double, double> expected_q_risks(const TimeSeriesDataset& ds,
                                           double (*forecast)(int last, int h)) {
  double ql50 = 0.0, ql90 = 0.0, total = 0.0;
  for (const tft::Window& w : ds.validation_windows()) {
    const int last = static_cast<int>(w.start) + 3;
    for (int h = 0; h < 3; ++h) {
      const double y = value_at(last + 1 + h);
      const double e = y - forecast(last, h);
      ql50 += std::max(0.5 * e, -0.5 * e);
      ql90 += std::max(0.9 * e, -0.1 * e);
      total += std::fabs(y);
    }
  }
  return {2.0 * ql50 / total, 2.0 * ql90 / total};
}

double naive(int last, int) { return value_at(last); }
double seasonal_2(int last, int h) { return value_at(last + 1 + h - 2 * ((h + 2) / 2)); }

}  // namespace

TFT_TEST(baselines_score_like_the_model_on_the_validation_windows) {
  TrainConfig c = integer_config();
  const TimeSeriesDataset ds = integer_series(c);
  assert_int_equal(static_cast<int>(ds.validation_windows().size()), 4);  // starts 10 ... 13
  const std::vector<double> quantiles{0.1, 0.5, 0.9};

  const tft::BaselineScores scores =
      tft::score_baselines(ds, ds.validation_windows(), quantiles, 2);
  const auto [naive50, naive90] = expected_q_risks(ds, naive);
  assert_int_equal(scores.naive.windows, 4);
  assert_true(std::fabs(scores.naive.q_risk_p50 - naive50) < 1e-6);
  assert_true(std::fabs(scores.naive.q_risk_p90 - naive90) < 1e-6);
  const auto [seasonal50, seasonal90] = expected_q_risks(ds, seasonal_2);
  assert_int_equal(scores.seasonality, 2);
  assert_string_equal(scores.seasonality_source.c_str(), "model.seasonality");
  assert_int_equal(scores.seasonal_naive.windows, 4);
  assert_true(std::fabs(scores.seasonal_naive.q_risk_p50 - seasonal50) < 1e-6);
  assert_true(std::fabs(scores.seasonal_naive.q_risk_p90 - seasonal90) < 1e-6);
  // The period of 2 is what a season ago repeats and yesterday misses.
  assert_true(scores.seasonal_naive.q_risk_p50 < scores.naive.q_risk_p50);
  // A point forecast stands for every quantile: one coverage for all of them.
  assert_true(scores.naive.coverage.size() == 3);
  assert_true(scores.naive.coverage[0] == scores.naive.coverage[2]);

  // Integer times have no season to infer; one longer than the encoder is not scored.
  const tft::BaselineScores inferred =
      tft::score_baselines(ds, ds.validation_windows(), quantiles, 0);
  assert_int_equal(inferred.seasonality, 0);
  assert_int_equal(inferred.seasonal_naive.windows, 0);
  assert_true(inferred.seasonality_source.find("set model.seasonality") != std::string::npos);
  const tft::BaselineScores too_long =
      tft::score_baselines(ds, ds.validation_windows(), quantiles, 5);
  assert_int_equal(too_long.seasonal_naive.windows, 0);
  assert_string_equal(too_long.seasonality_source.c_str(),
                      "model.seasonality: not scored, longer than windows.encoder_length 4");

  // The warnings name the baseline the model fails to beat.
  tft::ValidationMetrics model;
  model.q_risk_p50 = scores.naive.q_risk_p50 * 1.5;
  assert_int_equal(static_cast<int>(tft::baseline_warnings(model, scores).size()), 2);
  model.q_risk_p50 = 0.5 * (scores.naive.q_risk_p50 + scores.seasonal_naive.q_risk_p50);
  const std::vector<std::string> warnings = tft::baseline_warnings(model, scores);
  assert_int_equal(static_cast<int>(warnings.size()), 1);
  assert_true(warnings[0].find("no better than the seasonal-naive (m = 2) forecast's") !=
              std::string::npos);
  model.q_risk_p50 = scores.seasonal_naive.q_risk_p50 * 0.5;
  assert_true(tft::baseline_warnings(model, scores).empty());
}

TFT_TEST(seasonality_is_inferred_from_the_time_step) {
  TrainConfig c = integer_config();
  c.data.time_column = "date";
  const auto load = [&](const std::vector<std::string>& times) {
    std::string text = "date,y\n";
    for (std::size_t i = 0; i < times.size(); ++i) {
      text += times[i] + "," + std::to_string(value_at(static_cast<int>(i))) + "\n";
    }
    return TimeSeriesDataset::from_reader(tft::CsvReader("y.csv", text), c);
  };
  std::vector<std::string> daily, business, hourly, half_hourly;
  for (int d = 1; d <= 20; ++d) {
    char text[32];
    std::snprintf(text, sizeof text, "2024-01-%02d", d);
    daily.push_back(text);
    std::snprintf(text, sizeof text, "2024-01-01T%02d:00:00", d);
    hourly.push_back(text);
    std::snprintf(text, sizeof text, "2024-01-01T%02d:%02d:00", d / 2, d % 2 * 30);
    half_hourly.push_back(text);
  }
  for (int d = 1; business.size() < 20; ++d) {  // 2024-01-01 was a Monday
    if ((d - 1) % 7 >= 5) continue;
    char text[32];
    std::snprintf(text, sizeof text, "2024-%02d-%02d", d > 31 ? 2 : 1, d > 31 ? d - 31 : d);
    business.push_back(text);
  }
  std::string source;
  assert_int_equal(tft::infer_seasonality(load(daily), source), 7);
  assert_string_equal(source.c_str(), "daily data");
  assert_int_equal(tft::infer_seasonality(load(business), source), 5);
  assert_string_equal(source.c_str(), "business-daily data");
  assert_int_equal(tft::infer_seasonality(load(hourly), source), 24);
  assert_string_equal(source.c_str(), "hourly data");
  assert_int_equal(tft::infer_seasonality(load(half_hourly), source), 48);  // a daily cycle
  assert_string_equal(source.c_str(), "30-minute data");
}

TFT_TEST(coverage_counts_targets_at_or_below_each_quantile) {
  tft::MetricAccumulator metrics({0.1, 0.5, 0.9});
  // Two windows of two steps; forecasts (P10, P50, P90) and targets chosen per case:
  // y = 5 in [4, 5, 6]: at or below P50 and P90, inside;
  // y = 1 below [2, 3, 4]: at or below all three, outside;
  // y = 9 above [2, 3, 4]: at or below none, outside;
  // y = 4 at P90 [1, 2, 4]: at or below P90, inside (bounds included).
  const torch::Tensor prediction =
      torch::tensor({4.f, 5.f, 6.f, 2.f, 3.f, 4.f, 2.f, 3.f, 4.f, 1.f, 2.f, 4.f}).view({2, 2, 3});
  const torch::Tensor target = torch::tensor({5.f, 1.f, 9.f, 4.f}).view({2, 2});
  metrics.add(prediction, target, prediction, target);
  const tft::ValidationMetrics m = metrics.result();
  assert_true(m.coverage.size() == 3);
  assert_true(m.coverage[0] == 0.25 && m.coverage[1] == 0.5 && m.coverage[2] == 0.75);
  assert_true(m.interval_coverage == 0.5);
  // The sums travel between processes and come back the same.
  tft::MetricAccumulator other({0.1, 0.5, 0.9});
  other.set_totals(metrics.totals());
  const tft::ValidationMetrics again = other.result();
  assert_true(again.coverage == m.coverage && again.interval_coverage == m.interval_coverage);
  const std::vector<double> too_few{1.0, 2.0};
  TFT_ASSERT_THROWS_WITH(other.set_totals(too_few), tft::InvalidArgumentError,
                         "expected 12 numbers, got 2");
  // One quantile: no interval.
  tft::MetricAccumulator single({0.5});
  single.add(prediction.narrow(2, 1, 1), target, prediction.narrow(2, 1, 1), target);
  assert_true(std::isnan(single.result().interval_coverage));
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(baselines_score_like_the_model_on_the_validation_windows),
      cmocka_unit_test(seasonality_is_inferred_from_the_time_step),
      cmocka_unit_test(coverage_counts_targets_at_or_below_each_quantile),
  };
  return cmocka_run_group_tests_name("baselines", tests, nullptr, nullptr);
}
