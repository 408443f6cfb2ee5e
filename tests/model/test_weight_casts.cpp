// Mixed precision casts each weight that a product reads once per pass (model/weight_casts.h):
// product_operand hands out the pass's cast, segments of every mode read it, however many
// chunks they run in, and the gradient reaches the float32 parameter through that one cast.
#include "common/operator_counter.h"
#include "model/quantizable_linear.h"
#include "model/segment.h"
#include "model/weight_casts.h"
#include "nn/precision.h"

#include <ATen/ops/cat.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::QuantizableLinear;
using tft::SegmentMode;
using tft::WeightCasts;
using tft::WeightCastsScope;
using tft::checkpoint::TensorVector;

namespace {

// Two products in a row, as a GRN's layers are.
struct TwoLayers : torch::nn::Module {
  QuantizableLinear first{register_module("first", QuantizableLinear(6, 5))};
  QuantizableLinear second{register_module("second", QuantizableLinear(5, 4))};
  at::Tensor forward(const at::Tensor& x) { return second(first(x).tanh()); }
};

struct Step {
  std::vector<at::Tensor> grads;
  std::int64_t casts = 0;  // aten::_to_copy calls in forward and backward
};

// One bf16-mixed step of `layers` over a bfloat16 input that needs no gradient (so nothing but
// weights is ever cast), the rows cut into `chunks` segments of `mode`; with `cast_once`, the
// pass's weight casts installed as the model installs them.
Step step(const std::shared_ptr<TwoLayers>& layers, SegmentMode mode, std::int64_t chunks,
          bool cast_once) {
  torch::manual_seed(3);
  const at::Tensor x = torch::randn({12, 6}).to(torch::kBFloat16);
  for (auto& p : layers->parameters()) p.mutable_grad() = at::Tensor();
  tft::OperatorCounter ops("step");
  {
    const tft::AutocastScope autocast(tft::Precision::Bf16Mixed, c10::DeviceType::CPU);
    std::optional<WeightCastsScope> casts;
    if (cast_once) {
      casts.emplace(
          std::make_shared<WeightCasts>(tft::product_parameters(*layers), torch::kBFloat16));
    }
    TensorVector pieces;
    for (const at::Tensor& rows : x.chunk(chunks)) {
      pieces.push_back(tft::run_segment(
          [layers](const TensorVector& in) { return TensorVector{layers->forward(in[0])}; }, {rows},
          {layers}, mode)[0]);
    }
    const at::Tensor loss = at::cat(pieces).sum();
    loss.backward();
  }
  Step result;
  result.casts = ops.calls_by_operator()["aten::_to_copy"];
  for (const auto& p : layers->parameters()) {
    assert_true(p.grad().defined() && p.grad().scalar_type() == torch::kFloat);
    result.grads.push_back(p.grad().clone());
  }
  return result;
}

}  // namespace

TFT_TEST(product_operand_is_the_pass_cast_inside_its_scope_only) {
  auto layers = std::make_shared<TwoLayers>();
  const at::Tensor weight = layers->first->weight;
  const at::Tensor unrelated = torch::ones({2});
  assert_true(tft::product_operand(weight).is_same(weight));
  const std::vector<at::Tensor> parameters = tft::product_parameters(*layers);
  assert_int_equal(parameters.size(), 4);  // two weights, two biases
  {
    const WeightCastsScope scope(std::make_shared<WeightCasts>(parameters, torch::kBFloat16));
    const at::Tensor cast = tft::product_operand(weight);
    assert_true(cast.scalar_type() == torch::kBFloat16);
    assert_true(cast.requires_grad() && !cast.is_leaf());     // in the graph, to the weight
    assert_true(tft::product_operand(weight).is_same(cast));  // one cast per pass
    assert_true(tft::product_operand(unrelated).is_same(unrelated));
    assert_true(tft::cast_for_products(unrelated).scalar_type() == torch::kBFloat16);
  }
  assert_true(tft::product_operand(weight).is_same(weight));
  assert_true(tft::cast_for_products(unrelated).is_same(unrelated));
}

// However many chunks a segment runs in, and whether it recomputes, keeps its graph or is a
// plain graph: each weight is cast once forward and its gradient converted once backward. A
// recomputing and a kept segment give the same bits; per-use casts (no scope) cast per chunk,
// and the gradients agree with theirs within bfloat16's rounding.
TFT_TEST(every_segment_mode_reads_one_cast_per_weight) {
  auto layers = std::make_shared<TwoLayers>();
  const std::int64_t parameters = 4;
  for (const SegmentMode mode :
       {SegmentMode::kGraph, SegmentMode::kKept, SegmentMode::kRecomputed}) {
    for (const std::int64_t chunks : {1, 3}) {
      const Step once = step(layers, mode, chunks, /*cast_once=*/true);
      const Step per_use = step(layers, mode, chunks, /*cast_once=*/false);
      std::printf("  mode %d, %lld chunks: %lld casts once per pass, %lld per use\n",
                  static_cast<int>(mode), static_cast<long long>(chunks),
                  static_cast<long long>(once.casts), static_cast<long long>(per_use.casts));
      assert_int_equal(once.casts, 2 * parameters);
      if (chunks > 1) assert_true(per_use.casts > once.casts);
      for (std::size_t i = 0; i < once.grads.size(); ++i) {
        const double scale = per_use.grads[i].abs().max().item<double>();
        const double error = (once.grads[i] - per_use.grads[i]).abs().max().item<double>();
        assert_true(error <= scale * 1.6e-2);  // a few bfloat16 roundings (2^-8 each)
      }
    }
  }
  for (const std::int64_t chunks : {1, 3}) {
    const Step kept = step(layers, SegmentMode::kKept, chunks, true);
    const Step recomputed = step(layers, SegmentMode::kRecomputed, chunks, true);
    for (std::size_t i = 0; i < kept.grads.size(); ++i) {
      assert_true(torch::equal(kept.grads[i], recomputed.grads[i]));
    }
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(product_operand_is_the_pass_cast_inside_its_scope_only),
      cmocka_unit_test(every_segment_mode_reads_one_cast_per_weight),
  };
  return cmocka_run_group_tests_name("weight casts", tests, nullptr, nullptr);
}
