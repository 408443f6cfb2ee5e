// Batch gathering into TFTBatch tensors: shapes, dtypes, values (against the dataset's own
// columns and scalers), empty groups, unscaling back to original units, and a forward pass of
// the model on a gathered batch.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/error.h"
#include "config/train_config.h"
#include "data/batch.h"
#include "data/target_normalizer.h"
#include "data/time_series_dataset.h"
#include "model/tft_model.h"

#include "dataset_support.h"
#include "support/cmocka_cpp.h"

using tft::TimeSeriesDataset;
using tft::TrainConfig;
using tft::Window;
using tft_test::load;

namespace {

// Three stores, daily dates, every kind of input.
TrainConfig full_config() {
  TrainConfig c = tft_test::base_config();
  c.data.path = "shop.csv";
  c.data.time_column = "date";
  c.data.group_columns = {"store"};
  c.data.target = "sales";
  c.data.static_reals = {"size"};
  c.data.static_categoricals = {{"store", 0}, {"region", 0}};
  c.data.known_reals = {"price", "relative_time_idx"};
  c.data.known_categoricals = {{"promo", 0}, {"day_of_week", 0}};
  c.data.unknown_reals = {"visitors"};
  c.data.unknown_categoricals = {{"weather", 0}};
  c.windows.encoder_length = 5;
  c.windows.prediction_length = 3;
  c.split.validation_steps = 3;
  return c;
}

std::string shop_csv() {
  std::string text = "store,region,size,date,price,promo,visitors,weather,sales\n";
  const char* weather[] = {"sun", "rain", "fog"};
  for (int s = 0; s < 3; ++s) {
    for (int d = 0; d < 20; ++d) {
      char row[200];
      std::snprintf(row, sizeof row, "s%d,%s,%d,2023-03-%02d,%.2f,%d,%d,%s,%.1f\n", s,
                    s == 1 ? "north" : "south", 10 + s, d + 1, 2.0 + 0.1 * (d % 4), d % 5 == 0,
                    100 + 7 * d + s, weather[(d + s) % 3], 50.0 + 10 * s + d * (s + 1));
      text += row;
    }
  }
  return text;
}

void expect_shape(const torch::Tensor& t, std::vector<std::int64_t> shape, torch::Dtype dtype,
                  const char* what) {
  if (t.sizes().vec() != shape) fail_msg("%s: unexpected shape", what);
  if (t.scalar_type() != dtype) fail_msg("%s: unexpected dtype", what);
}

}  // namespace

TFT_TEST(test_shapes_dtypes_and_values) {
  TrainConfig c = full_config();
  // The target scaled like the other reals, so the scaler's figures check it.
  c.data.target_normalizer = {tft::TargetScope::Series, tft::TargetCenter::Statistic,
                              tft::TargetMethod::Standard, tft::TargetTransformation::None};
  const TimeSeriesDataset ds = load(shop_csv(), c);
  const std::vector<Window> windows = {ds.training_windows()[0], ds.training_windows()[9],
                                       ds.validation_windows().back()};
  const tft::TrainingBatch batch = tft::gather_batch(ds, windows);
  const tft::TFTBatch& in = batch.inputs;
  expect_shape(in.static_reals, {3, 1}, torch::kFloat32, "static_reals");
  expect_shape(in.static_categoricals, {3, 2}, torch::kInt64, "static_categoricals");
  expect_shape(in.encoder_reals, {3, 5, 4}, torch::kFloat32, "encoder_reals");
  expect_shape(in.encoder_categoricals, {3, 5, 3}, torch::kInt64, "encoder_categoricals");
  expect_shape(in.decoder_reals, {3, 3, 2}, torch::kFloat32, "decoder_reals");
  expect_shape(in.decoder_categoricals, {3, 3, 2}, torch::kInt64, "decoder_categoricals");
  expect_shape(batch.targets, {3, 3}, torch::kFloat32, "targets");
  expect_shape(batch.series, {3}, torch::kInt64, "series");
  expect_shape(batch.decoder_times, {3, 3}, torch::kInt64, "decoder_times");

  const std::vector<float>& sales = ds.real_column("sales");
  const std::vector<float>& visitors = ds.real_column("visitors");
  const std::vector<float>& price = ds.real_column("price");
  const auto& weather = ds.categorical_column("weather");
  const auto& promo = ds.categorical_column("promo");
  const auto& dow = ds.categorical_column("day_of_week");
  const tft::StandardScaler& scaler = ds.transforms().scaler;
  const std::size_t c_sales = *scaler.column_index("sales");
  const std::size_t c_visitors = *scaler.column_index("visitors");
  const std::size_t c_price = *scaler.column_index("price");
  for (std::int64_t b = 0; b < 3; ++b) {
    const Window& w = windows[static_cast<std::size_t>(b)];
    const tft::SeriesInfo& s = ds.series()[w.series];
    const std::size_t row0 = static_cast<std::size_t>(s.offset) + w.start;
    const std::size_t g = *scaler.find_group(s.group_values);
    assert_int_equal(batch.series[b].item<std::int64_t>(), w.series);
    for (std::int64_t t = 0; t < 5; ++t) {
      const std::size_t row = row0 + static_cast<std::size_t>(t);
      // encoder reals: visitors, price, relative_time_idx, sales
      const auto er = in.encoder_reals[b][t];
      assert_true(std::fabs(er[0].item<float>() - scaler.transform(visitors[row], g, c_visitors)) <
                  1e-5);
      assert_true(std::fabs(er[1].item<float>() - scaler.transform(price[row], g, c_price)) < 1e-5);
      assert_true(er[2].item<float>() == static_cast<float>((t - 5) / 5.0));
      assert_true(std::fabs(er[3].item<float>() - scaler.transform(sales[row], g, c_sales)) < 1e-5);
      // encoder categoricals: weather, promo, day_of_week
      const auto ec = in.encoder_categoricals[b][t];
      assert_int_equal(ec[0].item<std::int64_t>(), weather[row]);
      assert_int_equal(ec[1].item<std::int64_t>(), promo[row]);
      assert_int_equal(ec[2].item<std::int64_t>(), dow[row]);
    }
    for (std::int64_t t = 0; t < 3; ++t) {
      const std::size_t row = row0 + 5 + static_cast<std::size_t>(t);
      const auto dr = in.decoder_reals[b][t];
      assert_true(std::fabs(dr[0].item<float>() - scaler.transform(price[row], g, c_price)) < 1e-5);
      assert_true(dr[1].item<float>() == static_cast<float>(t / 5.0));
      assert_int_equal(in.decoder_categoricals[b][t][0].item<std::int64_t>(), promo[row]);
      assert_true(std::fabs(batch.targets[b][t].item<float>() -
                            scaler.transform(sales[row], g, c_sales)) < 1e-5);
      assert_int_equal(batch.decoder_times[b][t].item<std::int64_t>(), ds.times()[row]);
    }
  }
  // Static inputs: the store's own code, its region, its size scaled across stores.
  const auto& store_enc = ds.transforms().encoders.at("store");
  const Window& last = windows[2];
  assert_int_equal(in.static_categoricals[2][0].item<std::int64_t>(),
                   store_enc.encode(ds.series()[last.series].group_values[0]));
  // Sizes 10, 11, 12: mean 11, std sqrt(2/3).
  const float expected_size =
      static_cast<float>((10.0 + last.series - 11.0) / std::sqrt(2.0 / 3.0));
  assert_true(std::fabs(in.static_reals[2][0].item<float>() - expected_size) < 1e-5);
  // The last validation window ends at the series' end: its decoder is the validation part.
  assert_string_equal(ds.format_time(batch.decoder_times[2][2].item<std::int64_t>()).c_str(),
                      "2023-03-20");

  // Back to original units.
  const torch::Tensor restored = tft::unscale_target(ds, batch, batch.targets);
  for (std::int64_t b = 0; b < 3; ++b) {
    const Window& w = windows[static_cast<std::size_t>(b)];
    const std::size_t row0 = static_cast<std::size_t>(ds.series()[w.series].offset) + w.start + 5;
    for (std::int64_t t = 0; t < 3; ++t) {
      assert_true(std::fabs(restored[b][t].item<float>() -
                            sales[row0 + static_cast<std::size_t>(t)]) < 1e-3);
    }
  }
  // Quantile predictions [B, T, Q] broadcast the same way.
  const torch::Tensor q = batch.targets.unsqueeze(-1).repeat({1, 1, 3});
  assert_true(torch::allclose(tft::unscale_target(ds, batch, q).select(2, 1), restored));
  tft::TrainingBatch broken = batch;
  broken.target_scale = broken.target_scale.to(torch::kFloat32);
  TFT_ASSERT_THROWS_WITH(tft::unscale_target(ds, broken, q), tft::DataError,
                         "target_scale must be a [B] and its decoder_center a [B, T_dec] float64");
  TFT_ASSERT_THROWS_WITH(tft::unscale_target(ds, batch, q.narrow(0, 0, 2)), tft::DataError,
                         "values must be [3, 3, ...] (batch size, decoder steps)");
  TFT_ASSERT_THROWS_WITH(tft::unscale_target(ds, batch, q.narrow(1, 0, 2)), tft::DataError,
                         "values must be [3, 3, ...]");
  TFT_ASSERT_THROWS_WITH(tft::gather_batch(ds, {Window{99, 0}}), tft::DataError,
                         "window 0 names series 99, but the dataset has 3");

  const tft::TrainingBatch moved = batch.to(torch::kCPU);
  assert_true(torch::equal(moved.inputs.encoder_reals, in.encoder_reals));
}

TFT_TEST(test_empty_groups_and_empty_batch) {
  TrainConfig c;
  c.data.path = "y.csv";
  c.data.time_column = "t";
  c.data.target = "y";
  c.windows.encoder_length = 2;
  c.windows.prediction_length = 1;
  c.split.validation_fraction = 0.0;
  const TimeSeriesDataset ds = load("t,y\n1,1\n2,2\n3,4\n4,8\n", c);
  const tft::TrainingBatch batch = tft::gather_batch(ds, ds.training_windows());
  expect_shape(batch.inputs.static_reals, {2, 0}, torch::kFloat32, "static_reals");
  expect_shape(batch.inputs.static_categoricals, {2, 0}, torch::kInt64, "static_categoricals");
  expect_shape(batch.inputs.encoder_reals, {2, 2, 1}, torch::kFloat32, "encoder_reals");
  expect_shape(batch.inputs.encoder_categoricals, {2, 2, 0}, torch::kInt64, "encoder_cats");
  expect_shape(batch.inputs.decoder_reals, {2, 1, 0}, torch::kFloat32, "decoder_reals");
  expect_shape(batch.inputs.decoder_categoricals, {2, 1, 0}, torch::kInt64, "decoder_cats");
  // y over all four rows (no validation): mean 3.75.
  assert_true(std::fabs(tft::unscale_target(ds, batch, batch.targets)[1][0].item<float>() - 8.0f) <
              1e-5);
  const tft::TrainingBatch none = tft::gather_batch(ds, {});
  expect_shape(none.inputs.encoder_reals, {0, 2, 1}, torch::kFloat32, "empty encoder_reals");
  expect_shape(none.targets, {0, 1}, torch::kFloat32, "empty targets");
}

// The target normalised per window from its encoder steps: each of the normaliser's settings
// against the formula, computed here from the raw column, and back to original units.
TFT_TEST(encoder_normalisation_follows_each_window) {
  using tft::TargetCenter;
  using tft::TargetMethod;
  using tft::TargetScope;
  using tft::TargetTransformation;
  const std::vector<tft::TargetNormalizerConfig> settings = {
      {TargetScope::Encoder, TargetCenter::Last, TargetMethod::Standard,
       TargetTransformation::None},
      {TargetScope::Encoder, TargetCenter::Statistic, TargetMethod::Standard,
       TargetTransformation::None},
      {TargetScope::Encoder, TargetCenter::Statistic, TargetMethod::Robust,
       TargetTransformation::Log},
      {TargetScope::Encoder, TargetCenter::Last, TargetMethod::Robust,
       TargetTransformation::Softplus},
      {TargetScope::Series, TargetCenter::Statistic, TargetMethod::Robust,
       TargetTransformation::Log1p},
  };
  for (const auto& setting : settings) {
    TrainConfig c = full_config();
    c.data.target_normalizer = setting;
    const TimeSeriesDataset ds = load(shop_csv(), c);
    const std::vector<float>& sales = ds.real_column("sales");
    const std::vector<Window> windows = {ds.training_windows()[3], ds.validation_windows()[1]};
    const tft::TrainingBatch batch = tft::gather_batch(ds, windows);
    const auto t = [&](double y) { return tft::transform_target(setting.transformation, y); };
    for (std::size_t b = 0; b < windows.size(); ++b) {
      const auto first =
          static_cast<std::size_t>(ds.series()[windows[b].series].offset) + windows[b].start;
      std::vector<double> encoder;
      for (std::size_t i = 0; i < 5; ++i) encoder.push_back(t(sales[first + i]));
      double center = 0.0, scale = 0.0;
      if (setting.scope == TargetScope::Series) {
        const tft::ScalerStats fitted = ds.target_stats(windows[b].series);
        center = fitted.mean;
        scale = fitted.scale;
      } else if (setting.method == TargetMethod::Standard) {
        for (double v : encoder) center += v / 5.0;
        for (double v : encoder) scale += (v - center) * (v - center) / 5.0;
        scale = std::sqrt(scale);
      } else {
        std::vector<double> sorted = encoder;
        std::sort(sorted.begin(), sorted.end());  // 5 values: quartiles at ranks 1 and 3
        center = sorted[2];
        scale = 0.5 * (sorted[3] - sorted[1]);
      }
      if (setting.center == TargetCenter::Last) center = encoder.back();
      const double got_center = batch.target_center[static_cast<std::int64_t>(b)].item<double>();
      const double got_scale = batch.target_scale[static_cast<std::int64_t>(b)].item<double>();
      if (std::fabs(got_center - center) > 1e-9 * std::max(1.0, std::fabs(center)) ||
          std::fabs(got_scale - scale) > 1e-9 * std::max(1.0, scale)) {
        fail_msg("%s/%s/%s/%s: center %.9g scale %.9g, expected %.9g and %.9g",
                 tft::to_string(setting.scope), tft::to_string(setting.center),
                 tft::to_string(setting.method), tft::to_string(setting.transformation), got_center,
                 got_scale, center, scale);
      }
      // The encoder's target input (the last encoder real) and the decoder targets.
      for (std::int64_t i = 0; i < 5; ++i) {
        const double expected = (t(sales[first + static_cast<std::size_t>(i)]) - center) / scale;
        assert_true(
            std::fabs(batch.inputs.encoder_reals[static_cast<std::int64_t>(b)][i][3].item<float>() -
                      expected) < 1e-5);
      }
      for (std::int64_t h = 0; h < 3; ++h) {
        const double y = sales[first + 5 + static_cast<std::size_t>(h)];
        assert_true(std::fabs(batch.targets[static_cast<std::int64_t>(b)][h].item<float>() -
                              (t(y) - center) / scale) < 1e-5);
      }
    }
    // Back to original units through the inverse transformation.
    const torch::Tensor restored = tft::unscale_target(ds, batch, batch.targets);
    for (std::size_t b = 0; b < windows.size(); ++b) {
      const auto first =
          static_cast<std::size_t>(ds.series()[windows[b].series].offset) + windows[b].start + 5;
      for (std::int64_t h = 0; h < 3; ++h) {
        const float y = sales[first + static_cast<std::size_t>(h)];
        assert_true(std::fabs(restored[static_cast<std::int64_t>(b)][h].item<float>() - y) <
                    1e-3f * std::max(1.0f, y));
      }
    }
  }
}

// Center seasonal: each decoder step centered on the value one season earlier (m = 2 with 3
// steps: step 2 reaches two seasons back), the encoder on its last value; a forecast of 0 is
// the seasonal naive one, and the targets go back to the data.
TFT_TEST(seasonal_center_makes_zero_the_seasonal_naive_forecast) {
  using tft::TargetTransformation;
  for (const TargetTransformation transformation :
       {TargetTransformation::None, TargetTransformation::Log}) {
    TrainConfig c = full_config();
    c.data.target_normalizer.center = tft::TargetCenter::Seasonal;
    c.data.target_normalizer.transformation = transformation;
    c.model.seasonality = 2;
    const TimeSeriesDataset ds = load(shop_csv(), c);
    assert_int_equal(ds.transforms().target_season, 2);
    const std::vector<float>& sales = ds.real_column("sales");
    const std::vector<Window> windows = {ds.training_windows()[3], ds.validation_windows()[1]};
    const tft::TrainingBatch batch = tft::gather_batch(ds, windows);
    const torch::Tensor zero_forecast =
        tft::unscale_target(ds, batch, torch::zeros_like(batch.targets));
    const torch::Tensor restored = tft::unscale_target(ds, batch, batch.targets);
    const auto t = [&](double y) { return tft::transform_target(transformation, y); };
    for (std::size_t b = 0; b < windows.size(); ++b) {
      const auto i = static_cast<std::int64_t>(b);
      const std::size_t last =
          static_cast<std::size_t>(ds.series()[windows[b].series].offset) + windows[b].start + 4;
      assert_true(batch.target_center[i].item<double>() == t(sales[last]));
      const double scale = batch.target_scale[i].item<double>();
      const std::size_t back[] = {last - 1, last, last - 1};  // m * ceil((h + 1) / m) rows back
      for (std::int64_t h = 0; h < 3; ++h) {
        const float seasonal = sales[back[h]];
        const float y = sales[last + 1 + static_cast<std::size_t>(h)];
        assert_true(batch.decoder_center[i][h].item<double>() == t(seasonal));
        assert_true(std::fabs(batch.targets[i][h].item<float>() - (t(y) - t(seasonal)) / scale) <
                    1e-5);
        assert_true(std::fabs(zero_forecast[i][h].item<float>() - seasonal) <
                    1e-5f * std::max(1.0f, seasonal));
        assert_true(std::fabs(restored[i][h].item<float>() - y) < 1e-3f * std::max(1.0f, y));
      }
    }
  }
}

TFT_TEST(test_gathered_batch_feeds_the_model) {
  const TrainConfig c = full_config();
  const TimeSeriesDataset ds = load(shop_csv(), c);
  TrainConfig small = c;
  small.model.hidden_size = 8;
  small.model.attention_heads = 2;
  const tft::ModelConfig model_config = tft::make_model_config(small, ds.schema());
  model_config.validate();
  torch::manual_seed(0);
  tft::TFTModel model(model_config);
  const tft::WindowSampler sampler(ds.training_windows(), 4, true, 7);
  const tft::TrainingBatch batch = tft::gather_batch(ds, sampler.epoch_batches(0)[0]);
  const tft::TFTOutput out = model->forward(batch.inputs);
  expect_shape(out.prediction, {4, 3, 3}, torch::kFloat32, "prediction");
  assert_true(torch::isfinite(out.prediction).all().item<bool>());
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shapes_dtypes_and_values),
      cmocka_unit_test(test_empty_groups_and_empty_batch),
      cmocka_unit_test(encoder_normalisation_follows_each_window),
      cmocka_unit_test(seasonal_center_makes_zero_the_seasonal_naive_forecast),
      cmocka_unit_test(test_gathered_batch_feeds_the_model),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
