// The trainer's parts on their own: LR schedule and warm-up, early stopping, metrics (q-risk by
// hand), gradient clipping, Adam and AdamW, atomic files and folders, ModelConfig JSON, the
// window after the data (future times and calendar inputs) and the summary text.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "common/error.h"
#include "common/torch_compat.h"
#include "config/train_config.h"
#include "data/csv_reader.h"
#include "data/time_series_dataset.h"
#include "train/atomic_file.h"
#include "train/early_stopping.h"
#include "train/forecast_csv.h"
#include "train/fused_adam.h"
#include "data/future_window.h"
#include "train/gradient_clipping.h"
#include "train/lr_schedule.h"
#include "train/metrics.h"
#include "train/model_config_json.h"
#include "train/summary.h"

#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using namespace tft::testing;

TFT_TEST(test_reduce_on_plateau) {
  tft::LrScheduleConfig config;
  config.factor = 0.5;
  config.patience = 2;
  config.min_lr = 0.1;
  tft::LrSchedule schedule(config, 1.0);
  assert_true(schedule.step(5.0) == 1.0);  // better than infinity
  assert_true(schedule.step(5.0) == 1.0);  // 1 bad epoch
  assert_true(schedule.step(6.0) == 0.5);  // 2 bad epochs: reduce
  assert_true(schedule.step(4.0) == 0.5);  // better: count reset
  assert_true(schedule.step(4.0) == 0.5);
  assert_true(schedule.step(4.0) == 0.25);
  assert_true(schedule.step(std::nan("")) == 0.25);  // NaN is never better
  assert_true(schedule.step(4.0) == 0.125);
  assert_true(schedule.step(4.0) == 0.125);
  assert_true(schedule.step(4.0) == 0.1);  // floor
  assert_int_equal(schedule.state().reductions, 4);
  // The state survives JSON exactly.
  const tft::LrSchedule::State back =
      tft::LrSchedule::state_from_json(tft::LrSchedule::state_to_json(schedule.state()));
  assert_true(back.learning_rate == schedule.state().learning_rate);
  assert_true(back.best == 4.0);
  assert_int_equal(back.bad_epochs, schedule.state().bad_epochs);
  const tft::LrSchedule::State fresh =
      tft::LrSchedule::state_from_json(tft::LrSchedule::state_to_json({}));
  assert_true(std::isinf(fresh.best));

  // A threshold: only a relative improvement of more than 10% counts; a cooldown: the epoch
  // after a reduction counts nothing.
  tft::LrScheduleConfig strict = config;
  strict.threshold = 0.1;
  strict.cooldown = 1;
  tft::LrSchedule patient(strict, 1.0);
  assert_true(patient.step(10.0) == 1.0);  // better than infinity
  assert_true(patient.step(9.5) == 1.0);   // not 10% better: 1 bad epoch
  assert_true(patient.step(8.0) == 1.0);   // 20% better: the best, count reset
  assert_true(patient.step(7.5) == 1.0);   // 1 bad
  assert_true(patient.step(7.4) == 0.5);   // 2 bad: reduce, cooldown starts
  assert_true(patient.step(9.0) == 0.5);   // cooldown: not counted
  assert_true(patient.step(9.0) == 0.5);   // 1 bad
  assert_int_equal(patient.state().cooldown_left, 0);
  assert_true(patient.step(9.0) == 0.25);  // 2 bad: reduce
  assert_int_equal(patient.state().cooldown_left, 1);
  assert_int_equal(tft::LrSchedule::state_from_json(tft::LrSchedule::state_to_json(patient.state()))
                       .cooldown_left,
                   1);

  config.kind = tft::LrScheduleKind::None;
  tft::LrSchedule constant(config, 0.3);
  for (int i = 0; i < 5; ++i) assert_true(constant.step(1.0) == 0.3);
}

// The linear warm-up: 1/4, 2/4, 3/4, then 1 for good; no warm-up (0) and a one-step warm-up
// are always 1 (PyTorch's LinearLR(start_factor=1/W, total_iters=W - 1) gives the same rates).
TFT_TEST(test_warmup_factor) {
  const double expected[] = {0.25, 0.5, 0.75, 1.0, 1.0, 1.0};
  for (std::int64_t step = 0; step < 6; ++step) {
    assert_true(tft::warmup_factor(4, step) == expected[step]);
    assert_true(tft::warmup_factor(0, step) == 1.0);
    assert_true(tft::warmup_factor(1, step) == 1.0);
  }
  assert_true(tft::warmup_factor(3, 0) == 1.0 / 3.0);
  assert_true(tft::warmup_factor(1000, 999) == 1.0);
  assert_true(tft::warmup_factor(1000, 123456789) == 1.0);
}

TFT_TEST(test_early_stopping) {
  tft::EarlyStopping early(2);
  assert_true(early.update(1, 3.0));
  assert_false(early.update(2, 3.0));
  assert_false(early.should_stop());
  assert_true(early.update(3, 2.0));
  assert_false(early.update(4, 2.5));
  assert_false(early.update(5, 2.0));
  assert_true(early.should_stop());
  assert_int_equal(early.best_epoch(), 3);
  tft::EarlyStopping never(0);
  for (int e = 1; e < 20; ++e) never.update(e, 1.0);
  assert_false(never.should_stop());
  assert_int_equal(never.best_epoch(), 1);
}

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

TFT_TEST(test_gradient_clipping) {
  torch::Tensor a = torch::zeros({1}, torch::requires_grad());
  torch::Tensor b = torch::zeros({1}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({3.0f});
  b.mutable_grad() = torch::tensor({4.0f});
  assert_true(std::fabs(tft::clip_gradient_norm({a, b}, 10.0).item<double>() - 5.0) < 1e-9);
  assert_true(a.grad().item<float>() == 3.0f);  // below the limit: untouched
  assert_true(std::fabs(tft::clip_gradient_norm({a, b}, 1.0).item<double>() - 5.0) < 1e-9);
  assert_true(std::fabs(a.grad().item<float>() - 0.6f) < 1e-6);
  assert_true(std::fabs(b.grad().item<float>() - 0.8f) < 1e-6);
  assert_true(std::fabs(tft::clip_gradient_norm({a, b}, 0.0).item<double>() - 1.0) <
              1e-5);  // measure only
  b.mutable_grad() = torch::tensor({std::numeric_limits<float>::infinity()});
  assert_true(std::isinf(tft::clip_gradient_norm({a, b}, 1.0).item<double>()));
  assert_true(std::fabs(a.grad().item<float>() - 0.6f) < 1e-6);  // not spread
  torch::Tensor none = torch::zeros({1}, torch::requires_grad());
  assert_true(tft::clip_gradient_norm({none}, 1.0).item<double>() == 0.0);
}

// FusedAdam against LibTorch's Adam on the same gradients: the same numbers up to rounding
// (one fused pass rounds differently in the last bits), the same state, and a parameter
// without a gradient left alone.
TFT_TEST(test_fused_adam_matches_adam) {
  for (const bool amsgrad : {false, true}) {
    torch::manual_seed(3);
    std::vector<torch::Tensor> initial = {torch::randn({7, 5}), torch::randn({5}),
                                          torch::randn({2, 3, 4}), torch::randn({3})};
    std::vector<torch::Tensor> a_params, b_params;
    for (const auto& t : initial) {
      a_params.push_back(t.clone().requires_grad_(true));
      b_params.push_back(t.clone().requires_grad_(true));
    }
    const auto options =
        torch::optim::AdamOptions(0.05).weight_decay(0.01).amsgrad(amsgrad).eps(1e-6);
    torch::optim::Adam reference(a_params, options);
    tft::FusedAdam fused(b_params, options);
    for (int step = 0; step < 6; ++step) {
      for (std::size_t i = 0; i + 1 < initial.size(); ++i) {  // the last one gets no gradient
        const torch::Tensor g = torch::randn_like(initial[i]) * (step + 1);
        a_params[i].mutable_grad() = g.clone();
        b_params[i].mutable_grad() = g.clone();
      }
      reference.step();
      fused.step();
    }
    for (std::size_t i = 0; i < initial.size(); ++i) {
      const double diff = (a_params[i] - b_params[i]).abs().max().item<double>();
      if (diff > 1e-5) fail_msg("amsgrad %d, parameter %zu: differs by %g", amsgrad, i, diff);
    }
    assert_true(torch::equal(b_params.back(), initial.back()));  // no gradient: untouched
    assert_int_equal(fused.state().size(), initial.size() - 1);
    for (std::size_t i = 0; i + 1 < initial.size(); ++i) {
      auto& a = dynamic_cast<torch::optim::AdamParamState&>(
          *tft::compat::optimizer_state(reference, a_params[i]));
      auto& b = dynamic_cast<torch::optim::AdamParamState&>(
          *tft::compat::optimizer_state(fused, b_params[i]));
      assert_int_equal(a.step(), b.step());
      assert_true((a.exp_avg() - b.exp_avg()).abs().max().item<double>() < 1e-5);
      assert_true((a.exp_avg_sq() - b.exp_avg_sq()).abs().max().item<double>() < 1e-4);
    }
  }
}

// FusedAdam with a decoupled weight decay against LibTorch's AdamW on the same gradients, in the
// fused kernel (float parameters) and in the fallback (a double among them: no single fused
// call), with and without amsgrad: equal up to rounding, and measurably not plain Adam.
TFT_TEST(test_fused_adam_with_weight_decay_matches_adamw) {
  for (const bool mixed : {false, true}) {
    for (const bool amsgrad : {false, true}) {
      torch::manual_seed(4);
      std::vector<torch::Tensor> initial = {torch::randn({7, 5}), torch::randn({5}),
                                            torch::randn({2, 3, 4}), torch::randn({3})};
      if (mixed) initial[1] = initial[1].to(torch::kDouble);
      std::vector<torch::Tensor> a_params, b_params, c_params;
      for (const auto& t : initial) {
        a_params.push_back(t.clone().requires_grad_(true));
        b_params.push_back(t.clone().requires_grad_(true));
        c_params.push_back(t.clone().requires_grad_(true));
      }
      torch::optim::AdamW reference(
          a_params, torch::optim::AdamWOptions(0.05).weight_decay(0.1).amsgrad(amsgrad).eps(1e-6));
      const auto options = torch::optim::AdamOptions(0.05).amsgrad(amsgrad).eps(1e-6);
      tft::FusedAdam fused(b_params, options, /*weight_decay=*/0.1);
      tft::FusedAdam plain(c_params, options);
      assert_true(fused.decoupled_weight_decay() == 0.1);
      assert_true(plain.decoupled_weight_decay() == 0.0);
      for (int step = 0; step < 6; ++step) {
        if (step == 3) {  // the rate changes mid-run, as the schedule and warm-up change it
          for (auto* o : {static_cast<torch::optim::Optimizer*>(&reference),
                          static_cast<torch::optim::Optimizer*>(&fused),
                          static_cast<torch::optim::Optimizer*>(&plain)}) {
            for (auto& group : o->param_groups()) group.options().set_lr(0.02);
          }
        }
        for (std::size_t i = 0; i + 1 < initial.size(); ++i) {  // the last one gets no gradient
          const torch::Tensor g = torch::randn_like(initial[i]) * (step + 1);
          a_params[i].mutable_grad() = g.clone();
          b_params[i].mutable_grad() = g.clone();
          c_params[i].mutable_grad() = g.clone();
        }
        reference.step();
        fused.step();
        plain.step();
      }
      double decayed = 0.0;
      for (std::size_t i = 0; i < initial.size(); ++i) {
        const double diff = (a_params[i] - b_params[i]).abs().max().item<double>();
        if (diff > 1e-5) {
          fail_msg("mixed %d, amsgrad %d, parameter %zu: differs from AdamW by %g", mixed, amsgrad,
                   i, diff);
        }
        decayed = std::max(decayed, (b_params[i] - c_params[i]).abs().max().item<double>());
      }
      assert_true(decayed > 1e-3);                                 // the decay did something
      assert_true(torch::equal(b_params.back(), initial.back()));  // no gradient: no decay
    }
  }
  // AdamOptions' own (L2) weight_decay and the decoupled one do not go together.
  std::vector<torch::Tensor> params = {torch::zeros({2}, torch::requires_grad())};
  bool refused = false;
  try {
    tft::FusedAdam both(params, torch::optim::AdamOptions(0.1).weight_decay(0.01), 0.01);
  } catch (const c10::Error&) {
    refused = true;
  }
  assert_true(refused);
}

TFT_TEST(test_atomic_files_and_folders) {
  const fs::path dir = scratch_dir("atomic");
  tft::write_file_atomically(dir / "a.txt", "one");
  tft::write_file_atomically(dir / "a.txt", "two");
  assert_string_equal(tft::read_file(dir / "a.txt").c_str(), "two");
  tft::replace_directory_atomically(dir / "model",
                                    [](const fs::path& d) { write_text(d / "x", "old"); });
  tft::replace_directory_atomically(dir / "model",
                                    [](const fs::path& d) { write_text(d / "y", "new"); });
  assert_false(fs::exists(dir / "model" / "x"));
  assert_string_equal(read_text(dir / "model" / "y").c_str(), "new");
  // A failure while filling leaves the old folder and no temporary.
  try {
    tft::replace_directory_atomically(dir / "model", [](const fs::path& d) {
      write_text(d / "z", "half");
      throw tft::IoError("disk full");
    });
    fail_msg("no error");
  } catch (const tft::IoError&) {
  }
  assert_string_equal(read_text(dir / "model" / "y").c_str(), "new");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++entries;
    assert_true(e.path().filename().string().find(".tmp-") == std::string::npos);
  }
  assert_int_equal(entries, 2);  // a.txt, model
  TFT_ASSERT_THROWS_WITH(tft::read_file(dir / "missing"), tft::IoError, "missing");
  fs::remove_all(dir);
}

TFT_TEST(test_model_config_json_round_trip) {
  tft::ModelConfig c;
  c.hidden_size = 24;
  c.attention_heads = 3;
  c.dropout = 0.15;
  c.decoder_layers = 2;
  c.quantiles = {0.02, 0.5, 0.98};
  c.encoder_length = 30;
  c.prediction_length = 7;
  c.unit_chunks = {{"lstm_encoder", 3}};
  c.schema.target = "sales";
  c.schema.static_categoricals = {{"store", 11, 4}};
  c.schema.known_reals = {"price"};
  c.schema.known_categoricals = {{"day_of_week", 8, 0}};
  c.schema.unknown_reals = {"visits"};
  const tft::ModelConfig back =
      tft::model_config_from_json(nlohmann::json::parse(tft::model_config_to_json(c).dump()));
  assert_int_equal(back.hidden_size, 24);
  assert_true(back.dropout == 0.15);
  assert_true(back.quantiles == c.quantiles);
  assert_int_equal(back.unit_chunks.at("lstm_encoder"), 3);
  assert_int_equal(back.schema.static_categoricals.at(0).cardinality, 11);
  assert_int_equal(back.schema.static_categoricals.at(0).embedding_dim, 4);
  assert_string_equal(back.schema.known_categoricals.at(0).name.c_str(), "day_of_week");
  assert_true(back.unit_names() == c.unit_names());
  nlohmann::json broken = nlohmann::json::parse(tft::model_config_to_json(c).dump());
  broken.erase("hidden_size");
  TFT_ASSERT_THROWS_WITH(tft::model_config_from_json(broken), tft::IoError, "hidden_size");
  // embedding_dropout: saved only where it is on; a file without the key (all older ones) reads
  // as 0, so a model without it is saved byte for byte as before.
  assert_false(tft::model_config_to_json(c).contains("embedding_dropout"));
  assert_true(back.embedding_dropout == 0.0);
  c.embedding_dropout = 0.25;
  const nlohmann::json with = nlohmann::json::parse(tft::model_config_to_json(c).dump());
  assert_true(with.at("embedding_dropout") == 0.25);
  assert_true(tft::model_config_from_json(with).embedding_dropout == 0.25);
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

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_on_plateau),
      cmocka_unit_test(test_warmup_factor),
      cmocka_unit_test(test_early_stopping),
      cmocka_unit_test(test_metrics_by_hand),
      cmocka_unit_test(test_gradient_clipping),
      cmocka_unit_test(test_fused_adam_matches_adam),
      cmocka_unit_test(test_fused_adam_with_weight_decay_matches_adamw),
      cmocka_unit_test(test_atomic_files_and_folders),
      cmocka_unit_test(test_model_config_json_round_trip),
      cmocka_unit_test(test_window_after_the_data),
      cmocka_unit_test(test_summary),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
