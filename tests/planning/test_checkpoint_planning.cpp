// dynamic(n, fraction) planned on measurements (train/checkpoint_planning.h): the measured
// peak of the plan meets fraction x the un-checkpointed peak (within the tolerance) whenever
// the floor allows it, an unreachable target says so and falls back to the floor, and
// planning leaves the model, its checkpointing and the random stream as they were.
#include "checkpoint/checkpoint_config.h"
#include "common/error.h"
#include "memory/memory_meter.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"
#include "optim/gradient_buffers.h"
#include "planning/checkpoint_planning.h"

#include "model/model_test_support.h"

#include <torch/types.h>

#include <cmath>
#include <cstdio>

#include "planning/planning_test_support.h"  // last: it includes support/cmocka_cpp.h

using tft::CheckpointConfig;
using tft::CheckpointPlan;
using namespace tft::testing;

namespace {

struct Fixture : TrainingSetup {
  Fixture() : TrainingSetup(moderate_config(), 32, 3) {
    tft::ensure_gradients(model->parameters());
  }

  CheckpointPlan plan(double fraction, tft::BoundaryDtype boundary = tft::BoundaryDtype::kFloat32) {
    return tft::plan_checkpointing(
        model, [&](std::int64_t) { return loss_fn(model->forward(batch).prediction, target); },
        CheckpointConfig::dynamic(model->units().size(), fraction).with_boundary_dtype(boundary),
        32, c10::Device(c10::DeviceType::CPU));
  }
};

}  // namespace

TFT_TEST(planned_peaks_meet_their_targets) {
  Fixture f;
  for (double fraction : {0.25, 0.5, 0.75}) {
    const CheckpointPlan p = f.plan(fraction);
    std::printf("fraction %.2f: %s\n", fraction, p.summary().c_str());
    for (const auto& u : p.units) {
      std::printf("    %-20s saves %8lld B  +%.2f ms  %lld of %lld chunks\n", u.name.c_str(),
                  static_cast<long long>(u.saved_bytes), 1e3 * u.recompute_seconds,
                  static_cast<long long>(u.checkpointed_chunks), static_cast<long long>(u.chunks));
    }
    assert_true(p.unchecked_peak_bytes > 0);
    assert_int_equal(p.units.size(), f.model->units().size());
    assert_true(p.minimum_peak_bytes < p.unchecked_peak_bytes);
    if (p.achievable) {
      assert_true(static_cast<double>(p.measured_peak_bytes) <=
                  (1.0 + tft::kPlanTolerance) * static_cast<double>(p.target_peak_bytes));
    } else {
      assert_int_equal(p.measured_peak_bytes, p.minimum_peak_bytes);
    }
    // The config names exactly the chosen units, the limits exactly those chosen in part.
    for (std::size_t i = 0; i < p.units.size(); ++i) {
      const auto& u = p.units[i];
      assert_int_equal(u.chunks, f.model->chunk_count(i, 32));
      assert_true(u.checkpointed_chunks >= 0 && u.checkpointed_chunks <= u.chunks);
      assert_int_equal(p.config.should_checkpoint(i), u.checkpointed());
      const bool partial = u.checkpointed() && u.checkpointed_chunks < u.chunks;
      assert_int_equal(p.chunk_limits.count(i), partial ? 1 : 0);
      if (partial) assert_int_equal(p.chunk_limits.at(i), u.checkpointed_chunks);
    }
    // Measured again as the model will run it, the plan's peak is what the planner measured.
    f.model->set_checkpointing(p.config);
    f.model->set_checkpointed_chunks(p.chunk_limits);
    tft::memory::MemoryMeter meter(c10::Device(c10::DeviceType::CPU));
    std::int64_t peak = 0;
    {
      tft::memory::ActivationProbe probe(meter);
      // As the planner's step: the forward's other outputs are gone before backward.
      torch::Tensor loss = f.loss_fn(f.model->forward(f.batch).prediction, f.target);
      loss.backward();
      peak = probe.activation_peak_bytes();
    }
    tft::zero_gradients(f.model->parameters());
    f.model->set_checkpointing(CheckpointConfig::none());
    f.model->set_checkpointed_chunks({});
    assert_int_equal(peak, p.measured_peak_bytes);
  }
  // A generous budget needs fewer checkpointed chunks than a tight one.
  std::int64_t loose = 0, tight = 0;
  for (const auto& u : f.plan(0.9).units) loose += u.checkpointed_chunks;
  for (const auto& u : f.plan(0.2).units) tight += u.checkpointed_chunks;
  assert_true(loose <= tight);
}

TFT_TEST(an_unreachable_target_falls_back_to_every_unit_and_says_so) {
  Fixture f;
  const CheckpointPlan p = f.plan(0.0);
  assert_false(p.achievable);
  for (const auto& u : p.units) assert_int_equal(u.checkpointed_chunks, u.chunks);
  assert_true(p.chunk_limits.empty());
  assert_int_equal(p.measured_peak_bytes, p.minimum_peak_bytes);
  assert_true(p.summary().find("not reachable") != std::string::npos);
  // The plan's predicted recompute is its units' (each with the price of its chunks).
  double recompute = 0.0;
  for (const auto& u : p.units) recompute += u.planned_recompute_seconds;
  assert_true(std::abs(recompute - p.predicted_recompute_seconds) < 1e-12);
}

TFT_TEST(plans_keep_the_requested_boundary_dtype) {
  // The planner measures every unit with the requested boundaries (that is its memory model
  // of them) and the plan runs with them. At this config's default chunks the floor is the
  // recompute of a historical_encoder chunk, which no dtype moves, so only the setting is
  // checked here; tests/model/test_compressed_boundaries.cpp measures the memory.
  Fixture f;
  const CheckpointPlan p = f.plan(0.0, tft::BoundaryDtype::kInt8);
  assert_true(p.config.boundary_dtype == tft::BoundaryDtype::kInt8);
  assert_true(p.minimum_peak_bytes > 0);
}

TFT_TEST(planning_leaves_the_model_and_random_stream_alone) {
  Fixture f;
  expect_planning_leaves_the_model_alone(f.model, [&] { f.plan(0.5); });
}

TFT_TEST(only_dynamic_requests_are_planned) {
  Fixture f;
  bool threw = false;
  try {
    tft::plan_checkpointing(
        f.model,
        [&](std::int64_t) { return f.loss_fn(f.model->forward(f.batch).prediction, f.target); },
        CheckpointConfig::uniform(1), 32, c10::Device(c10::DeviceType::CPU));
  } catch (const tft::ConfigError& e) {
    threw = std::string(e.what()).find("not a dynamic strategy") != std::string::npos;
  }
  assert_true(threw);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(planned_peaks_meet_their_targets),
      cmocka_unit_test(an_unreachable_target_falls_back_to_every_unit_and_says_so),
      cmocka_unit_test(plans_keep_the_requested_boundary_dtype),
      cmocka_unit_test(planning_leaves_the_model_and_random_stream_alone),
      cmocka_unit_test(only_dynamic_requests_are_planned),
  };
  return cmocka_run_group_tests_name("checkpoint_planning", tests, nullptr, nullptr);
}
