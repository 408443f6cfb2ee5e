// The whole TFT with compressed checkpoint boundaries (checkpoint.boundary_dtype): float32
// stays bitwise equal to no checkpointing, bfloat16 and int8 give the same forward pass and
// gradients within the bounds docs/config.md states, and int8 boundaries lower the memory a
// step keeps and its measured activation peak.
#include "checkpoint/checkpoint_config.h"
#include "memory/memory_meter.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"
#include "model_test_support.h"

#include <torch/autograd.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdio>
#include <string>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::BoundaryDtype;
using tft::CheckpointConfig;
using namespace tft::testing;

namespace {

// |a - b| / |b| in the L2 norm.
double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  const double norm = b.norm().item<double>();
  return norm > 0 ? (a - b).norm().item<double>() / norm : (a - b).norm().item<double>();
}

torch::Tensor flat(const std::vector<torch::Tensor>& grads) {
  std::vector<torch::Tensor> pieces;
  pieces.reserve(grads.size());
  for (const auto& g : grads) pieces.push_back(g.reshape(-1));
  return torch::cat(pieces);
}

}  // namespace

// The bounds docs/config.md states. Whole: the relative L2 error of all parameter gradients as
// one vector; worst tensor: of the worst single parameter tensor among those holding at least
// 1e-3 of the gradient's norm (tiny ones, like a bias that barely moves, have no meaningful
// relative error). Measured on this model (full, uniform(2), selective, dynamic): bfloat16 at
// most 0.09% whole and 0.31% worst tensor, int8 0.23% and 0.54%; the bounds leave 4-5x room
// for other LibTorch builds and machines.
TFT_TEST(gradients_stay_within_the_stated_bounds) {
  auto c = small_config(full_schema(), 12, 5);
  c.decoder_layers = 2;
  c.lstm_layers = 2;
  TrainingSetup t(c, 4, 5);
  auto& model = t.model;
  // Every unit in its chunks (checkpoint.chunk_every_unit): float32 boundaries are then
  // bitwise, and what remains is the compression's own error.
  const auto step = [&](CheckpointConfig config) {
    config.chunk_every_unit = true;
    return training_step(model, t.loss_fn, t.batch, t.target, config);
  };
  const auto reference = step(CheckpointConfig::none());
  const torch::Tensor reference_flat = flat(reference.grads);
  const double reference_norm = reference_flat.norm().item<double>();

  const size_t n = model->units().size();
  const std::vector<std::pair<std::string, CheckpointConfig>> strategies = {
      {"full", CheckpointConfig::uniform(1)},
      {"uniform(2)", CheckpointConfig::uniform(2)},
      {"selective({1,3})", CheckpointConfig::selective({1, 3})},
      {"dynamic(n, 0.5)", CheckpointConfig::dynamic(n, 0.5)},
  };
  const struct {
    BoundaryDtype dtype;
    double whole, worst_tensor;
  } bounds[] = {{BoundaryDtype::kFloat32, 0.0, 0.0},
                {BoundaryDtype::kBFloat16, 0.005, 0.015},
                {BoundaryDtype::kInt8, 0.01, 0.02}};
  for (const auto& [name, strategy] : strategies) {
    for (const auto& bound : bounds) {
      const auto run = step(strategy.with_boundary_dtype(bound.dtype));
      // The forward pass never sees the compressed copies: the loss is the same bits.
      assert_true(torch::equal(run.loss, reference.loss));
      double worst = 0;
      for (size_t i = 0; i < run.grads.size(); ++i) {
        if (reference.grads[i].norm().item<double>() < 1e-3 * reference_norm) continue;
        worst = std::max(worst, relative_error(run.grads[i], reference.grads[i]));
      }
      const double whole = relative_error(flat(run.grads), reference_flat);
      std::printf("  %-18s %-8s relative gradient error: whole %.2e, worst tensor %.2e\n",
                  name.c_str(), tft::boundary_dtype_name(bound.dtype).c_str(), whole, worst);
      if (bound.dtype == BoundaryDtype::kFloat32) {
        for (size_t i = 0; i < run.grads.size(); ++i) {
          assert_true(torch::equal(run.grads[i], reference.grads[i]));  // bitwise, as before
        }
      }
      assert_true(whole <= bound.whole);
      assert_true(worst <= bound.worst_tensor);
    }
  }
}

namespace {

struct Memory {
  int64_t kept = 0;  // held when the forward pass ends: the boundaries, mostly
  int64_t peak = 0;  // the step's activation peak
};

Memory step_memory(tft::TFTModel& model, tft::QuantileLoss& loss_fn, const tft::TFTBatch& batch,
                   const torch::Tensor& target, const CheckpointConfig& config) {
  model->set_checkpointing(config);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.mutable_grad().zero_();  // held before the probe
  }
  tft::memory::MemoryMeter meter(c10::Device(c10::DeviceType::CPU));
  tft::memory::ActivationProbe probe(meter);
  torch::manual_seed(7);
  auto loss = loss_fn(model->forward(batch).prediction, target);
  Memory m;
  m.kept = meter.current_bytes() - probe.baseline_bytes();
  loss.backward();
  m.peak = probe.activation_peak_bytes();
  return m;
}

}  // namespace

TFT_TEST(int8_boundaries_lower_the_kept_memory_and_the_peak) {
  auto c = moderate_config();
  // The step's peak is the boundaries kept plus the largest segment's recompute. With the
  // default chunks that recompute (a chunk of the historical encoder, whose inputs are batch
  // data, never compressed) outweighs the boundaries, and no dtype moves the peak; in finer
  // chunks the boundaries matter.
  c.unit_chunks = {{"historical_encoder", 24}, {"lstm_encoder", 12}, {"attention_0", 6}};
  TrainingSetup t(c, 32, 3);
  torch::manual_seed(7);
  t.loss_fn(t.model->forward(t.batch).prediction, t.target).backward();  // gradients allocated
  const auto measure = [&](const CheckpointConfig& config) {
    return step_memory(t.model, t.loss_fn, t.batch, t.target, config);
  };

  const auto full = CheckpointConfig::uniform(1);
  const Memory float32 = measure(full);
  const Memory bf16 = measure(full.with_boundary_dtype(BoundaryDtype::kBFloat16));
  const Memory int8 = measure(full.with_boundary_dtype(BoundaryDtype::kInt8));
  std::printf("  kept after forward: float32 %.3f MB, bfloat16 %.3f MB, int8 %.3f MB\n",
              float32.kept / 1e6, bf16.kept / 1e6, int8.kept / 1e6);
  std::printf("  step activation peak: float32 %.3f MB, bfloat16 %.3f MB, int8 %.3f MB\n",
              float32.peak / 1e6, bf16.peak / 1e6, int8.peak / 1e6);
  // Measured (hidden 32, encoder 48, batch 32): kept 66% (bfloat16) and 49% (int8) of float32,
  // not 50% and 25%: what the un-checkpointed quantile head and loss keep stays float32, and
  // int8 adds its scales. Peak 105% and 93%: the peak is a segment's recompute, which reads
  // float32 inputs in place but decompresses compressed ones into float32 copies held beside
  // them until its backward ends; at these sizes that outweighs what bfloat16 saves.
  assert_true(bf16.kept * 100 <= float32.kept * 75);
  assert_true(int8.kept * 100 <= float32.kept * 60);
  assert_true(int8.peak * 100 <= float32.peak * 96);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gradients_stay_within_the_stated_bounds),
      cmocka_unit_test(int8_boundaries_lower_the_kept_memory_and_the_peak),
  };
  return cmocka_run_group_tests_name("compressed boundaries", tests, nullptr, nullptr);
}
