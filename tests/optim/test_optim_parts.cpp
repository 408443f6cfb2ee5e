// The optimisation parts on their own: LR schedule and warm-up, early stopping, gradient
// clipping, Adam and AdamW.
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
#include "optim/early_stopping.h"
#include "optim/fused_adam.h"
#include "optim/gradient_clipping.h"
#include "optim/lr_schedule.h"

#include "support/cmocka_cpp.h"

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

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_on_plateau),
      cmocka_unit_test(test_warmup_factor),
      cmocka_unit_test(test_early_stopping),
      cmocka_unit_test(test_gradient_clipping),
      cmocka_unit_test(test_fused_adam_matches_adam),
      cmocka_unit_test(test_fused_adam_with_weight_decay_matches_adamw),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
