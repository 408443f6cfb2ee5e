// Quantization-aware training: the fake quantizer's grid, observer and straight-through
// gradient; QuantizableLinear without quantizers is torch::nn::Linear; and, the point, QAT
// under every checkpoint strategy gives gradients and observer states bitwise equal to no
// checkpointing.
#include "checkpoint/checkpoint_config.h"
#include "checkpoint/recompute.h"
#include "model/quantile_loss.h"
#include "model/quantizable_linear.h"
#include "model/tft_model.h"
#include "model_test_support.h"
#include "nn/fake_quantizer.h"

#include <torch/autograd.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::CheckpointConfig;
using tft::FakeQuantizer;
using tft::ModelConfig;
using tft::QuantizableLinear;
using tft::QuantizationScheme;
using tft::TFTBatch;
using tft::TFTModel;
using namespace tft::testing;

namespace {

bool bitwise_equal(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || torch::equal(a, b);
}

ModelConfig qat_config() {
  auto c = small_config(full_schema(), 12, 5);
  c.decoder_layers = 2;
  c.unit_chunks["static_encoder"] = 2;
  c.quantization.enabled = true;
  return c;
}

}  // namespace

TFT_TEST(quantizable_linear_without_quantizers_is_nn_linear) {
  // Sizes where a bias fused into the product (at::linear) would give other bits than
  // torch::nn::Linear's product-then-add.
  torch::manual_seed(3);
  torch::nn::Linear reference(64, 48);
  torch::manual_seed(3);
  QuantizableLinear linear(64, 48);
  // The same initial values, drawn the same way.
  assert_true(bitwise_equal(reference->weight, linear->weight));
  assert_true(bitwise_equal(reference->bias, linear->bias));
  assert_false(linear->quantized());
  const auto x = torch::randn({4, 37, 64});
  const auto expected = reference(x);
  const auto got = linear(x);
  assert_true(bitwise_equal(expected, got));
  expected.pow(2).sum().backward();
  got.pow(2).sum().backward();
  assert_true(bitwise_equal(reference->weight.grad(), linear->weight.grad()));
  assert_true(bitwise_equal(reference->bias.grad(), linear->bias.grad()));
  // The same parameter names, so a saved float model loads either way.
  std::vector<std::string> names;
  for (const auto& item : linear->named_parameters()) names.push_back(item.key());
  assert_true((names == std::vector<std::string>{"weight", "bias"}));
}

TFT_TEST(per_tensor_quantizer_calibrates_then_rounds_to_its_grid) {
  FakeQuantizer q(QuantizationScheme::PerTensorAffine, 8);
  q->train();
  q->set_observing(true);
  const auto x = torch::linspace(-1.0, 3.0, 101);
  // Uncalibrated: the input itself, while the range is collected (over two calls: chunks).
  assert_true(bitwise_equal(q(x.slice(0, 0, 50)), x.slice(0, 0, 50)));
  assert_true(bitwise_equal(q(x.slice(0, 50)), x.slice(0, 50)));
  assert_false(q->calibrated());
  q->commit_observations();
  assert_true(q->calibrated());
  const auto buffers = q->named_buffers();
  const double scale = buffers["scale"].item<double>();
  const int zero_point = buffers["zero_point"].item<int>();
  std::printf("  range [-1, 3]: scale %.6g, zero point %d\n", scale, zero_point);
  assert_true(std::abs(scale - 4.0 / 255.0) < 1e-7);
  assert_int_equal(zero_point, 64);  // round(1 / (4/255)) = 64: -1 lies near grid point 0

  // On the grid: (y / scale + zero point) is an integer in [0, 255].
  auto input = torch::linspace(-2.0, 4.0, 61).requires_grad_(true);
  const auto y = q(input);
  const auto levels = y.detach() / scale + zero_point;
  assert_true((levels - levels.round()).abs().max().item<double>() < 1e-3);
  assert_true(levels.min().item<double>() > -1e-3 && levels.max().item<double>() < 255.001);
  // Straight through inside the range, 0 outside it.
  y.sum().backward();
  const auto inside = (input.detach() >= -1.0 - scale) & (input.detach() <= 3.0);
  const auto grad = input.grad();
  assert_true(grad.masked_select(inside).eq(1).all().item<bool>());
  assert_true(grad.masked_select(~((input.detach() >= -1.1) & (input.detach() <= 3.1)))
                  .eq(0)
                  .all()
                  .item<bool>());

  // Moving average: the next commit moves the range 1% of the way to what it saw.
  q(torch::tensor({-3.0f, 7.0f}));
  q->commit_observations();
  assert_true(std::abs(q->named_buffers()["running_min"].item<double>() - (-1.0 - 0.02)) < 1e-6);
  assert_true(std::abs(q->named_buffers()["running_max"].item<double>() - (3.0 + 0.04)) < 1e-6);
  // A commit with nothing seen changes nothing.
  const auto before = q->named_buffers()["scale"].clone();
  q->commit_observations();
  assert_true(bitwise_equal(before, q->named_buffers()["scale"]));
}

TFT_TEST(per_channel_quantizer_is_symmetric_per_row) {
  FakeQuantizer q(QuantizationScheme::PerChannelSymmetric, 8, 2);
  q->train();
  q->set_observing(true);
  const auto w = torch::tensor({{0.5f, -1.0f, 0.25f}, {2.0f, 0.1f, -0.3f}});
  q(w);
  q->commit_observations();
  const auto scale = q->named_buffers()["scale"];
  assert_true(std::abs(scale[0].item<double>() - 1.0 / 127.5) < 1e-7);
  assert_true(std::abs(scale[1].item<double>() - 2.0 / 127.5) < 1e-7);
  assert_true(q->named_buffers()["zero_point"].eq(0).all().item<bool>());
  const auto levels = q(w) / scale.unsqueeze(1);
  assert_true((levels - levels.round()).abs().max().item<double>() < 1e-4);
}

TFT_TEST(observers_update_only_when_training_observing_and_not_recomputing) {
  FakeQuantizer q(QuantizationScheme::PerTensorAffine, 8);
  const auto x = torch::randn({8});
  q->train();
  q(x);  // not observing
  q->commit_observations();
  assert_false(q->calibrated());
  q->set_observing(true);
  q->eval();
  q(x);  // eval mode
  q->commit_observations();
  assert_false(q->calibrated());
  q->train();
  q->discard_observations();
  q(x);
  q->discard_observations();  // a planning pass's range is thrown away
  q->commit_observations();
  assert_false(q->calibrated());
}

TFT_TEST(a_recompute_does_not_observe) {
  QuantizableLinear linear(4, 3);
  linear->attach_fake_quantizers(tft::QuantizationConfig{true, 8, 8});
  linear->train();
  tft::set_fake_quantizers_observing(*linear, true);
  const auto x = torch::randn({5, 4}).requires_grad_(true);
  const auto out =
      tft::checkpoint::checkpoint_module(linear.ptr(),
                                         [&](const tft::checkpoint::TensorVector& in) {
                                           return tft::checkpoint::TensorVector{linear(in[0])};
                                         },
                                         {x});
  assert_true(out[0].requires_grad());
  // Forget what the forward saw; whatever is there after backward came from the recompute.
  tft::discard_fake_quantizer_observations(*linear);
  out[0].sum().backward();
  assert_true(x.grad().defined());
  tft::commit_fake_quantizer_observations(*linear);
  for (const auto& q : tft::fake_quantizers(*linear)) assert_false(q->calibrated());
}

TFT_TEST(a_float_model_has_no_quantizer_state) {
  auto c = qat_config();
  c.quantization.enabled = false;
  TFTModel model(c);
  for (const auto& item : model->named_buffers()) {
    assert_true(item.key().find("quantizer") == std::string::npos);
  }
  assert_true(tft::fake_quantizers(*model).empty());
  TFTModel quantized(qat_config());
  // Two quantizers (weight, input) per linear layer.
  std::size_t linears = 0;
  for (const auto& m : quantized->modules()) linears += m->as<QuantizableLinear>() != nullptr;
  std::printf("  %zu linear layers, %zu fake quantizers\n", linears,
              tft::fake_quantizers(*quantized).size());
  assert_int_equal(tft::fake_quantizers(*quantized).size(), 2 * linears);
  // The same parameters as the float model: QAT adds buffers only.
  assert_int_equal(quantized->parameters().size(), model->parameters().size());
}

namespace {

struct QatRun {
  std::vector<torch::Tensor> losses;
  std::vector<std::vector<torch::Tensor>> grads;  // per step
  std::vector<torch::Tensor> buffers;             // after the last step
  std::vector<torch::Tensor> parameters;          // after the last step
};

// `steps` SGD steps with QAT observing, from the same initial weights every time.
QatRun train_with_qat(const CheckpointConfig& checkpointing, const tft::ChunkLimits& limits,
                      int steps) {
  const auto c = qat_config();
  torch::manual_seed(11);
  TFTModel model(c);
  // Every unit in its chunks whatever recomputes (checkpoint.chunk_every_unit): the partition in
  // which strategies are bitwise equal.
  CheckpointConfig same_partition = checkpointing;
  same_partition.chunk_every_unit = true;
  model->set_checkpointing(same_partition);
  model->set_checkpointed_chunks(limits);
  model->train();
  tft::set_fake_quantizers_observing(*model, true);
  tft::QuantileLoss loss_fn(c.quantiles);
  QatRun run;
  for (int step = 0; step < steps; ++step) {
    torch::manual_seed(100 + step);  // the same batch and dropout masks in every run
    const TFTBatch batch = random_batch(c, 4);
    const auto target = torch::randn({4, c.prediction_length});
    for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
    tft::discard_fake_quantizer_observations(*model);
    auto loss = loss_fn(model->forward(batch).prediction, target);
    loss.backward();
    tft::commit_fake_quantizer_observations(*model);
    run.losses.push_back(loss.detach());
    std::vector<torch::Tensor> grads;
    for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
    run.grads.push_back(grads);
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.sub_(p.grad(), 0.05);
  }
  for (const auto& b : model->buffers()) run.buffers.push_back(b.clone());
  for (const auto& p : model->parameters()) run.parameters.push_back(p.detach().clone());
  return run;
}

}  // namespace

TFT_TEST(qat_is_bitwise_equal_under_every_checkpoint_strategy) {
  const int steps = 3;
  const QatRun reference = train_with_qat(CheckpointConfig::none(), {}, steps);
  // QAT really rounds: from the second step on (the first calibrates) the loss differs from a
  // float model's on the same weights and batch.
  {
    auto c = qat_config();
    c.quantization.enabled = false;
    torch::manual_seed(11);
    TFTModel float_model(c);
    torch::manual_seed(11);
    TFTModel qat_model(qat_config());
    qat_model->train();
    float_model->train();
    tft::set_fake_quantizers_observing(*qat_model, true);
    torch::manual_seed(7);
    const TFTBatch batch = random_batch(c, 4);
    qat_model->forward(batch);
    tft::commit_fake_quantizer_observations(*qat_model);
    torch::manual_seed(8);
    const auto quantized = qat_model->forward(batch).prediction;
    torch::manual_seed(8);
    const auto plain = float_model->forward(batch).prediction;
    const double diff = (quantized - plain).abs().max().item<double>();
    std::printf("  calibrated QAT vs float forward: max |diff| %.3g\n", diff);
    assert_true(diff > 1e-4);
  }
  for (const auto& b : reference.buffers) assert_true(b.defined());

  struct Setting {
    std::string name;
    CheckpointConfig config;
    tft::ChunkLimits limits;
  };
  const std::vector<Setting> settings = {
      {"lstm_encoder", CheckpointConfig::selective({3}), {}},
      {"lstm_decoder", CheckpointConfig::selective({4}), {}},
      {"all units", CheckpointConfig::uniform(1), {}},
      {"uniform(2)", CheckpointConfig::uniform(2), {}},
      {"selective({1,3})", CheckpointConfig::selective({1, 3}), {}},
      {"attention only", CheckpointConfig::uniform(1).with_checkpoint_ffn(false), {}},
      {"first chunk of every unit",
       CheckpointConfig::uniform(1),
       {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}},
  };
  for (const auto& [name, config, limits] : settings) {
    const QatRun run = train_with_qat(config, limits, steps);
    bool losses = true, grads = true, buffers = true, parameters = true;
    for (int s = 0; s < steps; ++s) {
      losses = losses && bitwise_equal(reference.losses[s], run.losses[s]);
      for (size_t i = 0; i < run.grads[s].size(); ++i) {
        if (!bitwise_equal(reference.grads[s][i], run.grads[s][i])) {
          std::printf("    step %d: gradient %zu differs by %.3g\n", s, i,
                      (reference.grads[s][i] - run.grads[s][i]).abs().max().item<double>());
        }
        grads = grads && bitwise_equal(reference.grads[s][i], run.grads[s][i]);
      }
    }
    for (size_t i = 0; i < run.buffers.size(); ++i) {
      buffers = buffers && bitwise_equal(reference.buffers[i], run.buffers[i]);
    }
    for (size_t i = 0; i < run.parameters.size(); ++i) {
      parameters = parameters && bitwise_equal(reference.parameters[i], run.parameters[i]);
    }
    std::printf("  %-26s losses %s, gradients %s, observers %s, weights %s (%d steps)\n",
                name.c_str(), losses ? "equal" : "DIFFER", grads ? "equal" : "DIFFER",
                buffers ? "equal" : "DIFFER", parameters ? "equal" : "DIFFER", steps);
    assert_true(losses);
    assert_true(grads);
    assert_true(buffers);
    assert_true(parameters);
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quantizable_linear_without_quantizers_is_nn_linear),
      cmocka_unit_test(per_tensor_quantizer_calibrates_then_rounds_to_its_grid),
      cmocka_unit_test(per_channel_quantizer_is_symmetric_per_row),
      cmocka_unit_test(observers_update_only_when_training_observing_and_not_recomputing),
      cmocka_unit_test(a_recompute_does_not_observe),
      cmocka_unit_test(a_float_model_has_no_quantizer_state),
      cmocka_unit_test(qat_is_bitwise_equal_under_every_checkpoint_strategy),
  };
  return cmocka_run_group_tests_name("quantization", tests, nullptr, nullptr);
}
