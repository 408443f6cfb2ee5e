// What a run on a GPU must keep from a run on the CPU: checkpointing's bitwise gradients (the
// CUDA dropout generator restored for the recompute) at every precision, the memory meter's
// numbers (the CUDA caching allocator's), and the trainer end to end (learning, the saved
// model, a resumed run ending bitwise like an uninterrupted one) in float32, bf16-mixed and
// 16-mixed with its loss scaler, and checkpoint.memory_budget planned against the caching
// allocator's statistics (a byte budget and auto).
//
// Labelled `cuda` in ctest. Without a CUDA build or without a GPU it prints why and exits 77,
// which ctest reports as skipped. Deterministic algorithms are on for the whole suite (and
// CUBLAS_WORKSPACE_CONFIG set by ctest), as bitwise comparisons on a GPU need.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <ATen/Context.h>

#include "common/device.h"
#include "common/device_kernel_counter.h"
#include "common/error.h"
#include "config/train_config_io.h"
#include "data/batch.h"
#include "memory/memory_meter.h"
#include "model/quantile_loss.h"
#include "optim/gradient_buffers.h"
#include "optim/loss_scaler.h"
#include "planning/budget_planning.h"
#include "store/saved_model.h"
#include "train/trainer.h"

#include "model/model_test_support.h"
#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

#ifdef TFT_WITH_CUDA

namespace fs = std::filesystem;
using tft::CheckpointConfig;
using tft::TFTBatch;
using tft::TFTModel;
using namespace tft::testing;

namespace {

const c10::Device kGpu(c10::DeviceType::CUDA, 0);

}  // namespace

namespace {

// At one precision, on the GPU: every strategy's loss and gradients are none's, bit for bit.
void check_gradient_parity_on_cuda(tft::Precision precision) {
  std::printf("  precision %s\n", tft::to_string(precision));
  auto c = small_config(full_schema(), 12, 5);
  c.lstm_layers = 2;
  c.decoder_layers = 2;
  torch::manual_seed(5);
  TFTModel model(c);
  model->to(kGpu);
  model->train();
  model->set_precision(precision);
  tft::QuantileLoss loss_fn(c.quantiles);
  const TFTBatch batch = tft::to_device(random_batch(c, 8), kGpu);
  const torch::Tensor target = torch::randn({8, c.prediction_length}).to(kGpu);

  // In the same partition (checkpoint.chunk_every_unit), where strategies are bitwise equal.
  CheckpointConfig none = CheckpointConfig::none();
  none.chunk_every_unit = true;
  const StepResult reference = training_step(model, loss_fn, batch, target, none);
  assert_true(reference.loss.is_cuda());
  assert_true(std::isfinite(reference.loss.item<double>()));
  // Dropout draws on the GPU: another seed, another loss.
  torch::manual_seed(43);
  const double other = loss_fn(model->forward(batch).prediction, target).item<double>();
  assert_true(other != reference.loss.item<double>());

  const std::vector<std::pair<std::string, CheckpointConfig>> settings = {
      {"all units", CheckpointConfig::uniform(1)},
      {"uniform(2)", CheckpointConfig::uniform(2)},
      {"lstm_encoder", CheckpointConfig::selective({3})},
      {"selective({1,3})", CheckpointConfig::selective({1, 3})},
  };
  for (auto [name, config] : settings) {
    config.chunk_every_unit = true;
    const StepResult r = training_step(model, loss_fn, batch, target, config);
    if (!torch::equal(r.loss, reference.loss)) fail_msg("%s: the loss differs", name.c_str());
    for (std::size_t i = 0; i < r.grads.size(); ++i) {
      if (r.grads[i].defined() != reference.grads[i].defined() ||
          (r.grads[i].defined() && !torch::equal(r.grads[i], reference.grads[i]))) {
        fail_msg("%s: gradient %zu differs from the one without checkpointing", name.c_str(), i);
      }
    }
  }
}

// `config` trained for two epochs into `output`, then resumed there to config's epochs: must
// end bitwise like `straight` (the same config run without a break).
void expect_resumed_run_bitwise(const tft::TrainConfig& config, const fs::path& output,
                                tft::Trainer& straight, const tft::TrainReport& a) {
  tft::TrainConfig two = config;
  two.training.epochs = 2;
  two.output.directory = output.string();
  {
    tft::Trainer first(two);
    assert_int_equal(first.train().epochs_run, 2);
  }
  tft::TrainConfig again = config;
  again.output.directory = output.string();
  tft::Trainer second(again);
  const tft::TrainReport b = second.train(nullptr, /*resume=*/true);
  assert_int_equal(b.resumed_from_epoch, 2);
  assert_int_equal(b.history.size(), a.history.size());
  for (std::size_t i = 0; i < a.history.size(); ++i) {
    if (a.history[i].train_loss != b.history[i].train_loss ||
        a.history[i].validation.loss != b.history[i].validation.loss) {
      fail_msg("%s, epoch %zu: the resumed run's losses differ", a.precision.c_str(), i + 1);
    }
  }
  assert_true(same_weights(straight.model(), second.model()));
}

}  // namespace

TFT_TEST(checkpointed_gradients_are_bitwise_equal_on_cuda) {
  check_gradient_parity_on_cuda(tft::Precision::Float32);
}

TFT_TEST(mixed_precision_gradients_are_bitwise_equal_across_strategies_on_cuda) {
  check_gradient_parity_on_cuda(tft::Precision::Bf16Mixed);
  check_gradient_parity_on_cuda(tft::Precision::Fp16Mixed);
}

// 16-mixed end to end: it learns, its loss scaler's state survives a snapshot (a resumed run
// ends bitwise like an uninterrupted one), and bf16-mixed learns too.
TFT_TEST(trainer_on_cuda_in_mixed_precision_learns_and_resumes_bitwise) {
  const fs::path dir = scratch_dir("cuda_mixed");
  write_text(dir / "data.csv", synthetic_csv(80));
  tft::TrainConfig three = synthetic_config(dir / "data.csv", dir / "straight");
  three.training.device = "cuda";
  three.training.epochs = 3;
  three.training.precision = tft::Precision::Fp16Mixed;
  tft::Trainer straight(three);
  const tft::TrainReport a = straight.train();
  assert_string_equal(a.precision.c_str(), "16-mixed");
  assert_true(a.best_validation_loss < a.initial_validation_loss);
  // The loss scaler's state survives the snapshot.
  expect_resumed_run_bitwise(three, dir / "interrupted", straight, a);

  tft::TrainConfig bf16 = three;
  bf16.training.precision = tft::Precision::Bf16Mixed;
  bf16.output.directory = (dir / "bf16").string();
  const tft::TrainReport c = tft::Trainer(bf16).train();
  assert_true(c.best_validation_loss < c.initial_validation_loss);
  fs::remove_all(dir);
}

// The loss scaler on the device it is meant for: an overflowing gradient skips the step and
// halves the scale, without touching the weights.
TFT_TEST(loss_scaler_skips_an_overflowing_step_on_cuda) {
  tft::LossScaler scaler(kGpu);
  const torch::Tensor w = torch::ones({8}, torch::device(kGpu).requires_grad(true));
  w.mutable_grad() = torch::full({8}, std::numeric_limits<float>::infinity(), torch::device(kGpu));
  scaler.unscale({w});
  assert_false(scaler.step_allowed());
  scaler.update();
  assert_true(scaler.current_scale() == 32768.0);
  w.mutable_grad() = torch::full({8}, 2.0f * 32768.0f, torch::device(kGpu));
  scaler.unscale({w});
  assert_true(scaler.step_allowed());
  assert_true(w.grad().cpu()[0].item<float>() == 2.0f);
}

TFT_TEST(memory_meter_reads_the_cuda_caching_allocator) {
  tft::memory::MemoryMeter meter(c10::Device(c10::DeviceType::CUDA));  // the current device
  const std::int64_t before = meter.current_bytes();
  constexpr std::int64_t kBytes = 64 << 20;
  meter.reset_peak();
  {
    const torch::Tensor block = torch::empty({kBytes / 4}, torch::device(kGpu));
    assert_true(meter.current_bytes() >= before + kBytes);
    assert_true(meter.peak_bytes() >= meter.current_bytes());
    // The CPU's allocations are not the GPU's.
    const std::int64_t on_gpu_now = meter.current_bytes();
    const torch::Tensor host = torch::empty({kBytes / 4});
    assert_int_equal(meter.current_bytes(), on_gpu_now);
  }
  assert_int_equal(meter.current_bytes(), before);
  assert_true(meter.peak_bytes() >= before + kBytes);
  meter.reset_peak();
  assert_int_equal(meter.peak_bytes(), meter.current_bytes());

  // The probe sees what autograd keeps for backward, and only that.
  tft::memory::ActivationProbe probe(meter);
  const torch::Tensor w = torch::randn({1024, 1024}, torch::device(kGpu).requires_grad(true));
  const torch::Tensor x = torch::randn({256, 1024}, torch::device(kGpu));
  torch::tanh(x.matmul(w)).sum().backward();
  assert_true(probe.activation_peak_bytes() >= 256 * 1024 * 4);
}

TFT_TEST(trainer_on_cuda_learns_saves_and_resumes_bitwise) {
  const fs::path dir = scratch_dir("cuda");
  write_text(dir / "data.csv", synthetic_csv(80));
  tft::TrainConfig four = synthetic_config(dir / "data.csv", dir / "straight");
  four.training.device = "cuda";
  four.training.epochs = 4;
  four.training.lr_schedule.patience = 1;
  tft::Trainer straight(four);
  const tft::TrainReport a = straight.train();
  assert_true(straight.model()->parameters().front().is_cuda());
  assert_true(a.best_validation_loss < a.initial_validation_loss);
  assert_true(a.peak_activation_bytes > 0);

  // Two epochs, then a resumed run to four: bitwise the uninterrupted run.
  expect_resumed_run_bitwise(four, dir / "interrupted", straight, a);

  // The saved model holds the GPU model's weights exactly; it predicts on the CPU, so its
  // forecasts match to rounding, not bitwise.
  tft::SavedModel saved = tft::SavedModel::load(dir / "straight" / "model");
  assert_true(same_weights(saved.model(), straight.model()));
  const tft::Predictions gpu = straight.predict();
  const tft::Predictions cpu = saved.predict(straight.dataset());
  assert_int_equal(gpu.forecasts.size(), cpu.forecasts.size());
  for (std::size_t i = 0; i < gpu.forecasts.size(); ++i) {
    const auto& x = gpu.forecasts[i].values;
    const auto& y = cpu.forecasts[i].values;
    assert_int_equal(x.size(), y.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      if (!(std::fabs(x[k] - y[k]) <= 1e-3f * (1.0f + std::fabs(y[k])))) {
        fail_msg("forecast %zu value %zu: GPU %g, CPU %g", i, k, x[k], y[k]);
      }
    }
  }
  fs::remove_all(dir);
}

// A byte budget between no checkpointing's peak and every unit's, planned and replayed on the
// GPU: the caching allocator's peak fits it; the trainer trains under it and under auto.
TFT_TEST(memory_budgets_fit_on_cuda) {
  TrainingSetup s(moderate_config(), 32, 3);
  s.model->to(kGpu);
  s.batch = tft::to_device(s.batch, kGpu);
  s.target = s.target.to(kGpu);
  tft::ensure_gradients(s.model->parameters());
  const tft::PlanningStep step = [&](std::int64_t rows) {
    return s.loss_fn(s.model->forward(tft::leading_rows(s.batch, rows)).prediction,
                     s.target.slice(0, 0, rows));
  };
  std::int64_t none = 0, floor = 0;
  {
    tft::PlanningMeter meter(s.model, step, 32, kGpu);
    meter.measure(CheckpointConfig::none());  // warm-up (cuBLAS handles, first allocations)
    none = meter.measure(CheckpointConfig::none()).peak_bytes;
    floor = meter.measure(CheckpointConfig::uniform(1)).peak_bytes;
  }
  std::printf("  none %lld B, every unit %lld B\n", static_cast<long long>(none),
              static_cast<long long>(floor));
  assert_true(floor < none);
  const std::int64_t budget = (none + floor) / 2;
  CheckpointConfig request =
      CheckpointConfig::none().with_checkpoint_attention(true).with_checkpoint_ffn(true);
  request.memory_budget = tft::MemoryBudget::of_bytes(budget);
  const tft::CheckpointPlan plan =
      tft::plan_for_budget(s.model, step, request, {budget, "half-way"}, 32, kGpu);
  std::printf("  %s\n", plan.summary().c_str());
  assert_true(plan.measured_peak_bytes <= budget);
  s.model->set_checkpointing(plan.config);
  s.model->set_checkpointed_chunks(plan.chunk_limits);
  tft::memory::MemoryMeter meter(kGpu);
  {
    tft::memory::ActivationProbe probe(meter);
    step(32).backward();
    assert_true(probe.activation_peak_bytes() <= budget);
  }

  // auto: what the device has left, less the optimizer state and the margin.
  const tft::BudgetRequest automatic =
      tft::resolve_budget(tft::MemoryBudget::automatic_budget(), kGpu, 1 << 20);
  std::printf("  %s\n", automatic.source.c_str());
  assert_true(automatic.bytes > 0);
  assert_true(automatic.source.find("available on cuda:0") != std::string::npos);

  const fs::path dir = scratch_dir("cuda_budget");
  write_text(dir / "data.csv", synthetic_csv(80));
  for (const char* text : {"auto", "40KiB"}) {
    tft::TrainConfig config = synthetic_config(dir / "data.csv", dir / text);
    config.training.device = "cuda";
    config.training.epochs = 2;
    tft::set_config_value(config, "checkpoint", std::string("{memory_budget: ") + text + "}");
    try {
      tft::Trainer trainer(config);
      const tft::TrainReport report = trainer.train();
      assert_true(report.memory.plan && report.memory.plan->budget);
      std::printf("  %s: %s; training peak %lld B\n", text, report.memory.plan->summary().c_str(),
                  static_cast<long long>(report.peak_activation_bytes));
      assert_true(report.peak_activation_bytes <= report.memory.plan->budget->budget_bytes);
    } catch (const tft::MemoryBudgetError& e) {  // 40 KiB may be below every plan: it says so
      std::printf("  %s: %s\n", text, e.what());
      assert_string_equal(text, "40KiB");
      assert_true(std::string(e.what()).find("batch_size") != std::string::npos);
    }
  }
  fs::remove_all(dir);
}

// tft-bench's kernel counts (issue 40): a known stretch gives at least its kernels and copy, and
// a checkpointed step runs more kernels than one without checkpointing (it reruns forwards).
TFT_TEST(kernels_run_on_cuda_are_counted) {
  const torch::Tensor a = torch::randn({64, 64}, torch::TensorOptions().device(kGpu));
  tft::DeviceKernelCounter counter(kGpu);
  counter.start();
  const torch::Tensor host = a.mm(a).mm(a).relu().cpu();
  const auto counts = counter.finish();
  if (!counts) fail_msg("no counts: %s", counter.unavailable_reason().c_str());
  std::printf("  two products, a ReLU, a copy: %lld kernels, %lld copies, %lld sets\n",
              static_cast<long long>(counts->kernels), static_cast<long long>(counts->memcpys),
              static_cast<long long>(counts->memsets));
  assert_true(counts->kernels >= 3);
  assert_true(counts->memcpys >= 1);
  assert_true(host.size(0) == 64);
  assert_false(counter.finish().has_value());  // once only

  {  // A counter dropped unfinished stops the profiler, so the next one records.
    tft::DeviceKernelCounter dropped(kGpu);
    dropped.start();
    (void)a.mm(a);
  }
  tft::DeviceKernelCounter outer(kGpu);
  outer.start();
  tft::DeviceKernelCounter inner(kGpu);  // one profiler a thread: the second declines
  inner.start();
  (void)a.relu();
  assert_false(inner.finish().has_value());
  std::printf("  a second counter at once: %s\n", inner.unavailable_reason().c_str());
  assert_true(inner.unavailable_reason().find("already running") != std::string::npos);
  const auto outer_counts = outer.finish();
  if (!outer_counts) fail_msg("no counts: %s", outer.unavailable_reason().c_str());
  assert_true(outer_counts->kernels >= 1);

  auto c = small_config(full_schema(), 12, 5);
  torch::manual_seed(5);
  TFTModel model(c);
  model->to(kGpu);
  model->train();
  tft::QuantileLoss loss_fn(c.quantiles);
  const TFTBatch batch = tft::to_device(random_batch(c, 8), kGpu);
  const torch::Tensor target = torch::randn({8, c.prediction_length}).to(kGpu);
  std::vector<std::int64_t> kernels;
  for (const CheckpointConfig& config : {CheckpointConfig::none(), CheckpointConfig::uniform(1)}) {
    tft::DeviceKernelCounter step(kGpu);
    step.start();
    (void)training_step(model, loss_fn, batch, target, config);
    const auto step_counts = step.finish();
    if (!step_counts) fail_msg("no counts: %s", step.unavailable_reason().c_str());
    kernels.push_back(step_counts->kernels);
  }
  std::printf("  a training step: %lld kernels without checkpointing, %lld with every unit\n",
              static_cast<long long>(kernels[0]), static_cast<long long>(kernels[1]));
  assert_true(kernels[0] > 100);
  assert_true(kernels[1] > kernels[0]);
}

#endif  // TFT_WITH_CUDA

int main() {
#ifndef TFT_WITH_CUDA
  std::printf("test_cuda: skipped: this build has no CUDA support (-DTFT_WITH_CUDA=ON)\n");
  return 77;
#else
  if (tft::cuda_device_count() == 0) {
    std::printf("test_cuda: skipped: no CUDA device is available\n");
    return 77;
  }
  at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(checkpointed_gradients_are_bitwise_equal_on_cuda),
      cmocka_unit_test(memory_meter_reads_the_cuda_caching_allocator),
      cmocka_unit_test(trainer_on_cuda_learns_saves_and_resumes_bitwise),
      cmocka_unit_test(mixed_precision_gradients_are_bitwise_equal_across_strategies_on_cuda),
      cmocka_unit_test(trainer_on_cuda_in_mixed_precision_learns_and_resumes_bitwise),
      cmocka_unit_test(loss_scaler_skips_an_overflowing_step_on_cuda),
      cmocka_unit_test(memory_budgets_fit_on_cuda),
      cmocka_unit_test(kernels_run_on_cuda_are_counted),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
#endif
}
