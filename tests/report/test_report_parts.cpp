// What a run reports, part by part: metrics (q-risk by hand), the window after the data (future
// times and calendar inputs, as a forecast reads them) and the summary text.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "common/error.h"
#include "config/train_config.h"
#include "data/future_window.h"
#include "data/time_series_dataset.h"
#include "readers/csv_reader.h"
#include "report/forecast_csv.h"
#include "report/metrics.h"
#include "report/series_columns.h"
#include "report/summary.h"

#include "support/cmocka_cpp.h"

TFT_TEST(test_metrics_by_hand) {
  // Two windows, two steps, quantiles 0.1 / 0.5 / 0.9.
  const std::vector<double> q{0.1, 0.5, 0.9};
  tft::MetricAccumulator m(q);
  const torch::Tensor y = torch::tensor({{10.0f, 20.0f}, {-5.0f, 0.0f}});
  const torch::Tensor p = torch::tensor({{{8.0f, 11.0f, 13.0f}, {15.0f, 18.0f, 30.0f}},
                                         {{-6.0f, -4.0f, -1.0f}, {-2.0f, 1.0f, 2.0f}}});
  // Scaled and original the same here, except the loss uses the "scaled" pair.
  m.add(p, y, p, y);
  const tft::ValidationMetrics r = m.result();
  auto ql = [](double q, double y, double yhat) {
    const double e = y - yhat;
    return std::max(q * e, (q - 1) * e);
  };
  const double ys[] = {10, 20, -5, 0};
  const double ps[4][3] = {{8, 11, 13}, {15, 18, 30}, {-6, -4, -1}, {-2, 1, 2}};
  double loss = 0, ql50 = 0, ql90 = 0, abs_y = 0, mae = 0;
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 3; ++k) loss += ql(q[static_cast<std::size_t>(k)], ys[i], ps[i][k]);
    ql50 += ql(0.5, ys[i], ps[i][1]);
    ql90 += ql(0.9, ys[i], ps[i][2]);
    abs_y += std::fabs(ys[i]);
    mae += std::fabs(ys[i] - ps[i][1]);
  }
  assert_true(std::fabs(r.loss - loss / 12) < 1e-12);
  assert_true(std::fabs(r.q_risk_p50 - 2 * ql50 / abs_y) < 1e-12);
  assert_true(std::fabs(r.q_risk_p90 - 2 * ql90 / abs_y) < 1e-12);
  assert_true(std::fabs(r.mae_p50 - mae / 4) < 1e-12);
  assert_int_equal(r.windows, 2);
  // Without a 0.9 quantile there is no P90 q-risk; JSON writes null.
  tft::MetricAccumulator only_median({0.5});
  only_median.add(p.narrow(2, 1, 1), y, p.narrow(2, 1, 1), y);
  assert_true(std::isnan(only_median.result().q_risk_p90));
  assert_true(tft::validation_metrics_to_json(only_median.result())["q_risk_p90"].is_null());
  // An epoch's JSON line reads back.
  tft::EpochMetrics e;
  e.epoch = 3;
  e.train_loss = 0.25;
  e.validation = r;
  e.learning_rate = 1e-3;
  e.best = true;
  const tft::EpochMetrics back =
      tft::epoch_metrics_from_json(nlohmann::json::parse(tft::epoch_metrics_to_json(e).dump()));
  assert_int_equal(back.epoch, 3);
  assert_true(back.validation.q_risk_p50 == r.q_risk_p50);
  assert_true(back.best);
}

TFT_TEST(test_window_after_the_data) {
  // Trading days only (no weekend rows): the future skips Saturday and Sunday, and the
  // calendar inputs are computed for the future dates.
  std::string csv = "date,price,v\n";
  const char* days[] = {"2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08",
                        "2024-01-09", "2024-01-10", "2024-01-11", "2024-01-12", "2024-01-15",
                        "2024-01-16", "2024-01-17", "2024-01-18", "2024-01-19", "2024-01-22",
                        "2024-01-23", "2024-01-24", "2024-01-25", "2024-01-26", "2024-01-29"};
  for (int i = 0; i < 20; ++i) {
    csv += std::string(days[i]) + "," + std::to_string(2 + i % 3) + "," + std::to_string(i) + "\n";
  }
  tft::TrainConfig c;
  c.data.path = "days.csv";
  c.data.time_column = "date";
  c.data.target = "v";
  c.data.known_reals = {"price", "relative_time_idx"};
  c.data.known_categoricals = {{"day_of_week", 0}, {"month", 0}};
  c.windows.encoder_length = 5;
  c.windows.prediction_length = 4;
  c.split.validation_fraction = 0.25;
  const tft::TimeSeriesDataset ds =
      tft::TimeSeriesDataset::from_reader(tft::CsvReader("days.csv", csv), c);
  const std::vector<std::int64_t> times = tft::future_times(ds, 0);
  assert_int_equal(times.size(), 4);
  // After Monday 2024-01-29: Tue 30, Wed 31, Thu Feb 1, Fri Feb 2.
  assert_string_equal(ds.format_time(times[0]).c_str(), "2024-01-30");
  assert_string_equal(ds.format_time(times[3]).c_str(), "2024-02-02");

  const tft::TrainingBatch b = tft::gather_future_batch(ds, {0});
  const auto& encoders = ds.transforms().encoders;
  // Decoder categoricals: day_of_week (Tuesday = 1 ... Friday = 4), month (1, 1, 2, 2).
  const auto dc = b.inputs.decoder_categoricals;
  assert_int_equal(dc[0][0][0].item<std::int64_t>(), encoders.at("day_of_week").encode("1"));
  assert_int_equal(dc[0][3][0].item<std::int64_t>(), encoders.at("day_of_week").encode("4"));
  assert_int_equal(dc[0][1][1].item<std::int64_t>(), encoders.at("month").encode("1"));
  assert_int_equal(dc[0][2][1].item<std::int64_t>(), encoders.at("month").encode("2"));
  // price (a plain known real) is carried forward: every future step has the last row's value.
  const auto dr = b.inputs.decoder_reals;
  for (int t = 1; t < 4; ++t) {
    assert_true(dr[0][t][0].item<float>() == dr[0][0][0].item<float>());
  }
  // relative_time_idx: t / encoder_length.
  assert_true(dr[0][2][1].item<float>() == static_cast<float>(2.0 / 5.0));
  assert_true(std::isnan(b.targets[0][0].item<float>()));
  assert_int_equal(b.decoder_times[0][0].item<std::int64_t>(), times[0]);

  // The encoder part is scaled as fill_sample scales it: the last validation window (rows
  // 11 ... 15 of its encoder) shares row 15 with the window after the data (rows 15 ... 19).
  const tft::TrainingBatch last = tft::gather_batch(ds, {ds.validation_windows().back()});
  assert_int_equal(ds.validation_windows().back().start, 11);
  assert_true(b.inputs.encoder_reals[0][0][0].item<float>() ==
              last.inputs.encoder_reals[0][4][0].item<float>());  // price
  // The target v is normalised per window (scope encoder): the same value in original units.
  const tft::ScalerStats future_norm{b.target_center[0].item<double>(),
                                     b.target_scale[0].item<double>()};
  const tft::ScalerStats last_norm{last.target_center[0].item<double>(),
                                   last.target_scale[0].item<double>()};
  assert_true(
      std::fabs(ds.denormalize_target(b.inputs.encoder_reals[0][0][2].item<float>(), future_norm) -
                ds.denormalize_target(last.inputs.encoder_reals[0][4][2].item<float>(),
                                      last_norm)) < 1e-4);
  const tft::ScalerStats expected_norm =
      ds.target_normalization(0, ds.series()[0].length - ds.encoder_length());
  assert_true(future_norm.mean == expected_norm.mean && future_norm.scale == expected_norm.scale);
  assert_true(b.inputs.encoder_reals[0][4][1].item<float>() ==
              last.inputs.encoder_reals[0][4][1].item<float>());
  assert_true(b.inputs.encoder_categoricals[0][0][0].item<std::int64_t>() ==
              last.inputs.encoder_categoricals[0][4][0].item<std::int64_t>());
}

TFT_TEST(test_summary) {
  tft::BaselineScores baselines;
  baselines.naive.q_risk_p50 = 0.1881;
  baselines.naive.windows = 4;
  baselines.seasonal_naive.q_risk_p50 = 0.125;
  baselines.seasonal_naive.windows = 4;
  tft::TrainReport report;
  report.epochs_run = 4;
  report.early_stopped = true;
  report.memory.checkpoint_summary = "Uniform checkpointing every 1 layers";
  report.memory.num_units = 3;
  report.memory.checkpointed_units = {"a", "b", "c"};
  report.memory.measured_savings = 0.5;
  report.baselines = baselines;
  report.validation.q_risk_p50 = 0.2;
  report.warnings = tft::baseline_warnings(report.validation, baselines);
  assert_int_equal(static_cast<int>(report.warnings.size()), 2);
  report.memory.boundary_dtype = "int8";
  const std::string summary = tft::summary_text(report);
  assert_true(summary.find("checkpoint boundaries") != std::string::npos);
  assert_true(tft::summary_json(report)["memory"]["boundary_dtype"] == "int8");
  assert_true(summary.find("4 (early stopped)") != std::string::npos);
  assert_true(summary.find("checkpointing                      every unit (3)") !=
              std::string::npos);
  assert_true(summary.find("every 1 layers") == std::string::npos);
  assert_true(summary.find("naive forecast: q-risk P50, P90    0.1881") != std::string::npos);
  assert_true(summary.find("warning                            the model's validation q-risk "
                           "P50 0.2000 is no better than the naive forecast's 0.1881") !=
              std::string::npos);
  report.memory.checkpointed_units = {"b"};
  assert_true(tft::summary_text(report).find("b (1 of 3 units)") != std::string::npos);
  assert_true(summary.find("activation savings: measured       50.0%") != std::string::npos);
  assert_true(tft::summary_json(report)["memory"]["measured_savings"] == 0.5);
  assert_string_equal(tft::float_text(1455.22f).c_str(), "1455.22");
  assert_string_equal(tft::float_text(std::nanf("")).c_str(), "");
}

// Issue 42: a panel grouped by `origin` wrote forecast.csv with two columns "origin".
TFT_TEST(test_series_columns_never_take_a_fixed_name) {
  using Names = std::vector<std::string>;
  assert_true(tft::series_column_names({}) == Names{"series"});
  assert_true(tft::series_column_names({"store", "item"}) == (Names{"store", "item"}));
  assert_true(tft::series_column_names({"origin"}) == Names{"series_origin"});
  for (const char* fixed : {"kind", "origin", "time", "horizon", "actual", "fold", "naive",
                            "seasonal_naive", "q0.5", "q1e-3", "q10"}) {
    assert_true(tft::is_fixed_forecast_column(fixed));
    assert_true(tft::series_column_names({fixed}) == Names{std::string("series_") + fixed});
  }
  for (const char* free : {"q", "qty", "q0.5x", "series", "Origin", "origin_airport"}) {
    assert_false(tft::is_fixed_forecast_column(free));
  }
  // The renamed column must not take another group column's name: it is prefixed again.
  assert_true(tft::series_column_names({"origin", "series_origin"}) ==
              (Names{"series_series_origin", "series_origin"}));
  assert_true(tft::series_column_names({"series_origin", "origin"}) ==
              (Names{"series_origin", "series_series_origin"}));
  assert_true(tft::series_column_names({"series"}) == Names{"series"});
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metrics_by_hand),
      cmocka_unit_test(test_window_after_the_data),
      cmocka_unit_test(test_summary),
      cmocka_unit_test(test_series_columns_never_take_a_fixed_name),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
