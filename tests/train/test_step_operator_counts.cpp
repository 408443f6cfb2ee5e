// What a training step costs a GPU before any arithmetic: its operator calls (each a kernel
// launch there) and its host syncs (common/operator_counter.h). The step is the trainer's:
// forward, quantile loss, backward, FusedAdam. It reads no value back, so a GPU never waits
// inside it; the training loop reads the step's loss and norm only when it logs them.
#include "checkpoint/checkpoint_config.h"
#include "common/device_kernel_counter.h"
#include "common/operator_counter.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"
#include "model/variable_selection.h"
#include "optim/fused_adam.h"

#include "model/model_test_support.h"

#include <ATen/ops/ones.h>
#include <torch/optim/adam.h>

#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "support/cmocka_cpp.h"

using tft::CheckpointConfig;
using tft::OperatorCounter;
using tft::OperatorCounts;
using namespace tft::testing;

namespace {

struct CountedStep {
  OperatorCounts forward, loss, backward, optimizer;
  std::map<std::string, std::int64_t> by_operator;
  std::int64_t calls() const {
    return forward.calls + loss.calls + backward.calls + optimizer.calls;
  }
  std::int64_t syncs() const {
    return forward.syncs + loss.syncs + backward.syncs + optimizer.syncs;
  }
};

// One step of a fresh model (a warm-up step first: first calls allocate and may differ) with
// `checkpointing`, counted by phase.
// min_chunk_elements: small_config's 1 (every default chunk count), unless given.
CountedStep count_step(const CheckpointConfig& checkpointing,
                       const std::map<std::string, std::int64_t>& unit_chunks = {},
                       std::optional<std::int64_t> min_chunk_elements = std::nullopt) {
  auto config = small_config(full_schema(), 24, 6);
  config.decoder_layers = 2;
  config.unit_chunks = unit_chunks;
  if (min_chunk_elements) config.min_chunk_elements = *min_chunk_elements;
  TrainingSetup t(config, 8, 3);
  t.model->set_checkpointing(checkpointing);
  tft::FusedAdam optimizer(t.model->parameters(), torch::optim::AdamOptions(1e-3));
  const auto step = [&](OperatorCounter* ops) {
    const auto phase = [&](const char* name) {
      if (ops != nullptr) ops->begin_phase(name);
    };
    phase("forward");
    const torch::Tensor prediction = t.model->forward(t.batch).prediction;
    phase("loss");
    const torch::Tensor loss = t.loss_fn(prediction, t.target);
    phase("backward");
    loss.backward();
    phase("optimizer");
    optimizer.step();
    phase("after");
  };
  step(nullptr);
  optimizer.zero_grad();
  OperatorCounter ops("before");
  step(&ops);
  CountedStep counted;
  counted.by_operator = ops.calls_by_operator();
  for (const auto& [name, counts] : ops.phases()) {
    if (name == "forward") counted.forward = counts;
    if (name == "loss") counted.loss = counts;
    if (name == "backward") counted.backward = counts;
    if (name == "optimizer") counted.optimizer = counts;
  }
  std::printf(
      "  %-40s calls %lld (forward %lld, loss %lld, backward %lld, optimizer %lld), "
      "syncs %lld\n",
      checkpointing.summary().c_str(), static_cast<long long>(counted.calls()),
      static_cast<long long>(counted.forward.calls), static_cast<long long>(counted.loss.calls),
      static_cast<long long>(counted.backward.calls),
      static_cast<long long>(counted.optimizer.calls), static_cast<long long>(counted.syncs()));
  return counted;
}

CheckpointConfig in_same_partition(CheckpointConfig config) {
  config.chunk_every_unit = true;
  return config;
}

}  // namespace

TFT_TEST(a_training_step_never_reads_a_value_back) {
  for (const CheckpointConfig& config :
       {CheckpointConfig::none(), CheckpointConfig::uniform(1), CheckpointConfig::selective({1, 3}),
        in_same_partition(CheckpointConfig::uniform(1))}) {
    const CountedStep step = count_step(config);
    assert_true(step.forward.calls > 0 && step.backward.calls > 0 && step.optimizer.calls > 0);
    assert_int_equal(step.syncs(), 0);
  }
}

// A unit that recomputes nothing runs whole: far fewer calls than in its chunks, and a plan
// pays for chunks only in the units it checkpoints.
TFT_TEST(units_that_recompute_nothing_run_whole) {
  const CountedStep whole = count_step(CheckpointConfig::none());
  const CountedStep chunked = count_step(in_same_partition(CheckpointConfig::none()));
  const CountedStep one_unit = count_step(CheckpointConfig::selective({1}));
  const CountedStep full = count_step(CheckpointConfig::uniform(1));
  assert_true(2 * whole.calls() < chunked.calls());
  assert_true(whole.calls() < one_unit.calls() && one_unit.calls() < full.calls());
  // The optimizer and the loss do not care how the model ran.
  assert_int_equal(whole.optimizer.calls, full.optimizer.calls);
  assert_int_equal(whole.loss.calls, full.loss.calls);
}

// A variable selection checkpointed in time chunks stacks its variables' GRN parameters once
// per step and hands the stacks to every chunk: more chunks add the chunks' own stacks (the
// embedded categoricals, in forward and recompute), not 8 more stacks of parameters each.
TFT_TEST(chunked_variable_selection_stacks_its_parameters_once_per_step) {
  const auto stacks = [](std::int64_t chunks) {
    const CountedStep step =
        count_step(CheckpointConfig::uniform(1), {{"historical_encoder", chunks}});
    return step.by_operator.at("aten::stack");
  };
  const std::int64_t two = stacks(2), four = stacks(4);
  std::printf("  aten::stack calls: %lld with 2 chunks, %lld with 4\n", static_cast<long long>(two),
              static_cast<long long>(four));
  assert_true(four > two);  // the embeddings' stacks are per chunk
  assert_true(four - two < static_cast<std::int64_t>(tft::StackedVariableGrns::kTensors));
}

// This model's units are small (batch 8, hidden 16: an encoder chunk of 3 steps holds 384
// elements a tensor), so with the library's minimum chunk size they run in one chunk each:
// full then makes fewer calls than in its default chunks. A unit given a count keeps it.
TFT_TEST(small_units_run_in_fewer_chunks_by_default) {
  const std::int64_t minimum = tft::ModelConfig::kDefaultMinChunkElements;
  const CountedStep chunked = count_step(CheckpointConfig::uniform(1));
  const CountedStep sized = count_step(CheckpointConfig::uniform(1), {}, minimum);
  const CountedStep configured =
      count_step(CheckpointConfig::uniform(1), {{"historical_encoder", 8}}, minimum);
  std::printf("  full: %lld calls in the default chunks, %lld sized, %lld with 8 encoder chunks\n",
              static_cast<long long>(chunked.calls()), static_cast<long long>(sized.calls()),
              static_cast<long long>(configured.calls()));
  assert_true(2 * sized.calls() < chunked.calls());
  assert_true(sized.calls() < configured.calls() && configured.calls() < chunked.calls());
}

TFT_TEST(the_counter_tells_host_reads_from_reads_inside_kernels) {
  OperatorCounter ops("reads");
  const torch::Tensor t = at::ones({3});
  (void)t.sum().item<float>();  // the host asks: a sync on a GPU
  ops.begin_phase("arithmetic");
  (void)(t * t + t);
  const auto phases = ops.phases();
  assert_int_equal(phases.size(), 2);
  assert_true(phases[0].first == "reads");
  assert_int_equal(phases[0].second.syncs, 1);
  assert_true(phases[0].second.calls >= 3);  // sum, item, _local_scalar_dense
  assert_int_equal(phases[1].second.syncs, 0);
  assert_true(phases[1].second.calls >= 2);
  assert_int_equal(ops.total().calls, phases[0].second.calls + phases[1].second.calls);
  assert_int_equal(ops.calls_by_operator().at("aten::mul"), 1);
  // One counter at a time: the callback is global.
  TFT_ASSERT_THROWS_WITH(OperatorCounter("again"), std::logic_error, "another counter");
}

// The CPU runs no kernels: the counter says so instead of counting zero (test_cuda counts a
// GPU's).
TFT_TEST(kernels_are_counted_on_a_cuda_device_only) {
  tft::DeviceKernelCounter counter(c10::Device(c10::kCPU));
  assert_false(counter.finish().has_value());
  assert_string_equal(counter.unavailable_reason().c_str(), "not started");
  counter.start();
  (void)(at::ones({3}) * 2);
  assert_false(counter.finish().has_value());
  std::printf("  %s\n", counter.unavailable_reason().c_str());
  assert_true(counter.unavailable_reason().find("only a CUDA device") != std::string::npos);
  TFT_ASSERT_THROWS_WITH(counter.start(), std::logic_error, "started already");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_training_step_never_reads_a_value_back),
      cmocka_unit_test(units_that_recompute_nothing_run_whole),
      cmocka_unit_test(chunked_variable_selection_stacks_its_parameters_once_per_step),
      cmocka_unit_test(small_units_run_in_fewer_chunks_by_default),
      cmocka_unit_test(the_counter_tells_host_reads_from_reads_inside_kernels),
      cmocka_unit_test(kernels_are_counted_on_a_cuda_device_only),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
