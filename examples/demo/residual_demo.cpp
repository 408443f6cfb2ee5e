// tft-checkpoint-demo: trains the same residual network twice from the same seed, once
// without and once with gradient checkpointing, and shows that the losses and gradients are
// identical while the activation memory is not.
#include "checkpoint/checkpoint_config.h"
#include "memory/memory_meter.h"
#include "model/residual_stack.h"

#include <torch/optim/adam.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

constexpr int64_t kWidth = 64, kHidden = 256, kDepth = 8, kBatch = 32, kSteps = 64;
constexpr int kTrainSteps = 30;

struct TrainRun {
  std::vector<double> losses;
  std::vector<torch::Tensor> final_grads;
  int64_t peak_activation_bytes = 0;
  double seconds = 0;
};

TrainRun train(const tft::CheckpointConfig& config) {
  torch::manual_seed(2024);
  tft::ResidualStack model(kWidth, kHidden, kDepth, /*dropout=*/0.1);
  model->train();
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  tft::memory::MemoryMeter meter(c10::Device(c10::DeviceType::CPU));

  // A fixed regression problem: map x to a smooth function of itself.
  torch::manual_seed(7);
  const auto x = torch::randn({kBatch, kSteps, kWidth});
  const auto target = torch::tanh(x.roll(1, -1)) * 0.5;

  TrainRun run;
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < kTrainSteps; ++step) {
    optimizer.zero_grad();
    tft::memory::ActivationProbe probe(meter);
    auto y = model->forward(x, [&](size_t i) { return config.should_checkpoint(i); });
    auto loss = torch::mse_loss(y, target);
    loss.backward();
    run.peak_activation_bytes = std::max(run.peak_activation_bytes, probe.activation_peak_bytes());
    run.losses.push_back(loss.item<double>());
    if (step + 1 == kTrainSteps) {
      for (const auto& p : model->parameters()) run.final_grads.push_back(p.grad().clone());
    }
    optimizer.step();
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace

int main() {
  try {
    const auto plain_config = tft::CheckpointConfig::none();
    const auto ckpt_config = tft::CheckpointConfig::uniform(1);
    std::printf(
        "Residual stack: %lld blocks, width %lld, hidden %lld, batch %lldx%lld, dropout 0.1\n",
        static_cast<long long>(kDepth), static_cast<long long>(kWidth),
        static_cast<long long>(kHidden), static_cast<long long>(kBatch),
        static_cast<long long>(kSteps));
    const TrainRun plain = train(plain_config);
    const TrainRun ckpt = train(ckpt_config);

    std::printf("\n%6s  %-18s  %-18s\n", "step", plain_config.summary().c_str(),
                ckpt_config.summary().c_str());
    for (int step = 0; step < kTrainSteps; step += 5) {
      std::printf("%6d  %-18.9f  %-18.9f\n", step + 1, plain.losses[step], ckpt.losses[step]);
    }
    double max_grad_diff = 0;
    for (size_t i = 0; i < plain.final_grads.size(); ++i) {
      max_grad_diff = std::max(
          max_grad_diff, (plain.final_grads[i] - ckpt.final_grads[i]).abs().max().item<double>());
    }
    const bool same_losses = plain.losses == ckpt.losses;
    std::printf("\nlosses identical at every step: %s\n", same_losses ? "yes" : "NO");
    std::printf("max |gradient difference| at the last step: %g\n", max_grad_diff);
    std::printf("peak activation memory: %.2f MiB without, %.2f MiB with checkpointing (-%.1f%%)\n",
                plain.peak_activation_bytes / 1048576.0, ckpt.peak_activation_bytes / 1048576.0,
                100.0 * (1.0 - static_cast<double>(ckpt.peak_activation_bytes) /
                                   static_cast<double>(plain.peak_activation_bytes)));
    std::printf("time for %d steps: %.2f s without, %.2f s with checkpointing (x%.2f)\n",
                kTrainSteps, plain.seconds, ckpt.seconds, ckpt.seconds / plain.seconds);
    return same_losses && max_grad_diff == 0.0 ? EXIT_SUCCESS : EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tft-checkpoint-demo: %s\n", e.what());
    return EXIT_FAILURE;
  }
}
