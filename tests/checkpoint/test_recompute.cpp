// The recompute mechanism: checkpointed gradients must be bitwise equal to un-checkpointed
// ones, in every arrangement, and the mechanism must be safe to misuse.
#include "checkpoint/recompute.h"
#include "model/residual_stack.h"

#include <torch/autograd.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/dropout.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdio>
#include <set>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::ResidualStack;
using tft::checkpoint::TensorVector;

namespace {

constexpr int64_t kWidth = 32, kHidden = 96, kDepth = 8, kBatch = 16, kSteps = 12;
constexpr double kDropout = 0.1;

struct RunResult {
  torch::Tensor loss;
  TensorVector grads;  // parameter gradients, in parameters() order
  torch::Tensor input_grad;
};

// One forward + backward of the stack with a fixed RNG seed (dropout draws from it).
RunResult run_stack(ResidualStack& stack, const std::function<bool(size_t)>& checkpointed,
                    bool input_requires_grad = true);

// The loss and gradients of a step whose backward has already run.
RunResult collect(ResidualStack& stack, const torch::Tensor& loss, const torch::Tensor& x) {
  RunResult result{loss.detach(), {}, x.requires_grad() ? x.grad().clone() : torch::Tensor()};
  for (const auto& p : stack->parameters()) result.grads.push_back(p.grad().clone());
  return result;
}

// The stack's loss on its output.
torch::Tensor stack_loss(const torch::Tensor& y) { return (y * y).mean() + y.sin().sum() * 1e-3; }

// A fresh input, and the RNG seeded for the forward's dropout draws.
torch::Tensor seeded_input(bool requires_grad = true) {
  torch::manual_seed(7);
  auto x = torch::randn({kBatch, kSteps, kWidth});
  x.requires_grad_(requires_grad);
  torch::manual_seed(1234);
  return x;
}

double max_abs_diff(const TensorVector& a, const TensorVector& b) {
  assert_int_equal(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    assert_true(a[i].defined() && b[i].defined());
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  }
  return worst;
}

RunResult run_stack(ResidualStack& stack, const std::function<bool(size_t)>& checkpointed,
                    bool input_requires_grad) {
  stack->zero_grad();
  auto x = seeded_input(input_requires_grad);
  auto loss = stack_loss(stack->forward(x, checkpointed));
  loss.backward();
  return collect(stack, loss, x);
}

void expect_identical(const RunResult& reference, const RunResult& other, const char* what) {
  const double loss_diff = (reference.loss - other.loss).abs().item<double>();
  const double grad_diff = max_abs_diff(reference.grads, other.grads);
  const double input_diff =
      reference.input_grad.defined()
          ? (reference.input_grad - other.input_grad).abs().max().item<double>()
          : 0.0;
  std::printf("  %-28s loss %.9f  |dloss| %g  max|dgrad| %g  max|dinput| %g\n", what,
              other.loss.item<double>(), loss_diff, grad_diff, input_diff);
  assert_true(loss_diff == 0.0);
  assert_true(grad_diff == 0.0);
  assert_true(input_diff == 0.0);
}

ResidualStack make_stack() {
  torch::manual_seed(42);
  ResidualStack stack(kWidth, kHidden, kDepth, kDropout);
  stack->train();
  return stack;
}

}  // namespace

TFT_TEST(parity_across_arrangements) {
  auto stack = make_stack();
  const auto reference = run_stack(stack, {});
  assert_true(reference.loss.item<double>() > 0);
  expect_identical(reference, run_stack(stack, [](size_t i) { return i % 2 == 0; }), "uniform(2)");
  const std::set<size_t> chosen{1, 4, 6};
  expect_identical(reference, run_stack(stack, [&](size_t i) { return chosen.count(i) > 0; }),
                   "selective{1,4,6}");
  expect_identical(reference, run_stack(stack, [](size_t) { return true; }), "all blocks");
}

TFT_TEST(dropout_is_really_active) {
  // Parity would be trivial if dropout drew nothing: two seeds must give different losses.
  auto stack = make_stack();
  torch::manual_seed(1);
  auto x = torch::randn({kBatch, kSteps, kWidth});
  torch::manual_seed(5);
  auto a = stack->forward(x).sum().item<double>();
  torch::manual_seed(6);
  auto b = stack->forward(x).sum().item<double>();
  assert_true(a != b);
}

TFT_TEST(parameters_only) {
  // No input requires grad: the segment must still be recorded through its parameters.
  auto stack = make_stack();
  const auto reference = run_stack(stack, {}, /*input_requires_grad=*/false);
  expect_identical(reference,
                   run_stack(stack, [](size_t) { return true; }, false), "all blocks, params only");
}

TFT_TEST(multiple_outputs_some_unused) {
  torch::manual_seed(3);
  torch::nn::Linear a(8, 8), b(8, 8);
  auto x = torch::randn({4, 8}, torch::requires_grad());
  auto segment = [&](const TensorVector& in) {
    auto h = torch::tanh(a(in[0]));
    return TensorVector{h * in[1], b(h).relu(), h.argmax(-1), h.sum()};
  };
  auto scale = torch::randn({4, 8}, torch::requires_grad());
  auto params = a->parameters();
  for (const auto& p : b->parameters()) params.push_back(p);

  auto plain = segment({x, scale});
  (plain[0].pow(2).sum() + plain[1].mean()).backward();  // output 3 unused, 2 is integer
  TensorVector reference;
  for (auto& t : TensorVector{x, scale}) reference.push_back(t.grad().clone());
  for (auto& p : params) reference.push_back(p.grad().clone());
  for (auto t : TensorVector{x, scale}) t.mutable_grad().reset();
  for (auto p : params) p.mutable_grad().reset();

  auto out = tft::checkpoint::checkpoint(segment, {x, scale}, params);
  assert_int_equal(out.size(), 4);
  assert_false(out[2].requires_grad());  // argmax: not differentiable
  assert_true(out[2].scalar_type() == torch::kLong);
  (out[0].pow(2).sum() + out[1].mean()).backward();
  TensorVector got;
  for (auto& t : TensorVector{x, scale}) got.push_back(t.grad().clone());
  for (auto& p : params) got.push_back(p.grad().clone());
  assert_true(max_abs_diff(reference, got) == 0.0);
}

TFT_TEST(nested_checkpoints) {
  auto stack = make_stack();
  const auto reference = run_stack(stack, {});

  // Outer segments of four blocks, each running its blocks checkpointed one by one.
  stack->zero_grad();
  auto x = seeded_input();
  auto params = stack->parameters();
  auto h = x;
  for (int half = 0; half < 2; ++half) {
    h = tft::checkpoint::checkpoint(
        [&, half](const TensorVector& in) {
          auto y = in[0];
          auto children = stack->children();
          for (int i = half * 4; i < half * 4 + 4; ++i) {
            auto block = std::dynamic_pointer_cast<tft::ResidualBlockImpl>(children[i]);
            y = tft::checkpoint::checkpoint_module(
                block,
                [block](const TensorVector& v) { return TensorVector{block->forward(v[0])}; },
                {y})[0];
          }
          return TensorVector{y};
        },
        {h}, params)[0];
  }
  auto loss = stack_loss(h);
  loss.backward();
  expect_identical(reference, collect(stack, loss, x), "nested 2 x 4");
}

TFT_TEST(is_recomputing_flags_the_rerun_only) {
  int forward_calls = 0, recompute_calls = 0;
  torch::nn::Linear layer(4, 4);
  auto segment = [&](const TensorVector& in) {
    (tft::checkpoint::is_recomputing() ? recompute_calls : forward_calls)++;
    return TensorVector{layer(in[0])};
  };
  assert_false(tft::checkpoint::is_recomputing());
  auto out = tft::checkpoint::checkpoint(segment, {torch::randn({2, 4})}, layer->parameters());
  assert_int_equal(forward_calls, 1);
  assert_int_equal(recompute_calls, 0);
  out[0].sum().backward();
  assert_int_equal(forward_calls, 1);
  assert_int_equal(recompute_calls, 1);
  assert_false(tft::checkpoint::is_recomputing());
}

TFT_TEST(second_backward_is_a_clear_error) {
  torch::nn::Linear layer(4, 4);
  auto segment = [&](const TensorVector& in) { return TensorVector{layer(in[0]).tanh()}; };
  auto x = torch::randn({3, 4}, torch::requires_grad());
  auto loss = tft::checkpoint::checkpoint(segment, {x}, layer->parameters())[0].sum();
  loss.backward();
  TFT_ASSERT_THROWS_WITH(loss.backward(), c10::Error, "second time");

  // With retain_graph the second backward works and accumulates the same gradient again.
  x.mutable_grad().reset();
  auto retained = tft::checkpoint::checkpoint(segment, {x}, layer->parameters())[0].sum();
  retained.backward({}, /*retain_graph=*/true);
  auto first = x.grad().clone();
  retained.backward();
  assert_true((x.grad() - 2 * first).abs().max().item<double>() == 0.0);
}

TFT_TEST(closure_is_freed_with_the_graph) {
  torch::nn::Linear layer(4, 4);
  auto sentinel = std::make_shared<int>(0);
  std::weak_ptr<int> watch = sentinel;
  {
    auto held = sentinel;
    sentinel.reset();
    auto out = tft::checkpoint::checkpoint(
        [held, &layer](const TensorVector& in) { return TensorVector{layer(in[0])}; },
        {torch::randn({2, 4})}, layer->parameters());
    held.reset();
    assert_false(watch.expired());  // the graph owns the closure
  }
  assert_true(watch.expired());  // graph dropped without backward: no leak

  auto again = std::make_shared<int>(0);
  std::weak_ptr<int> watch_again = again;
  {
    auto out = tft::checkpoint::checkpoint(
        [again, &layer](const TensorVector& in) { return TensorVector{layer(in[0])}; },
        {torch::randn({2, 4})}, layer->parameters());
    again.reset();
    out[0].sum().backward();
  }
  assert_true(watch_again.expired());  // after backward and release
}

TFT_TEST(no_grad_and_eval_run_plainly) {
  auto stack = make_stack();
  auto x = torch::randn({2, 3, kWidth});
  {
    torch::NoGradGuard no_grad;
    auto y = stack->forward(x, [](size_t) { return true; });
    assert_false(y.requires_grad());
  }
  stack->eval();
  auto a = stack->forward(x);
  auto b = stack->forward(x, [](size_t) { return true; });
  assert_true(torch::equal(a, b));
}

TFT_TEST(train_flags_of_forward_are_used_in_recompute) {
  // Switching to eval between forward and backward must not change the recompute (dropout
  // would otherwise be skipped and gradients would differ), and eval stays set afterwards.
  auto stack = make_stack();
  const auto reference = run_stack(stack, {});
  stack->zero_grad();
  auto x = seeded_input();
  auto loss = stack_loss(stack->forward(x, [](size_t) { return true; }));
  stack->eval();
  loss.backward();
  assert_false(stack->is_training());
  for (const auto& child : stack->modules()) assert_false(child->is_training());
  expect_identical(reference, collect(stack, loss, x), "eval() before backward");
}

TFT_TEST(in_place_change_before_backward_is_detected) {
  torch::nn::Linear layer(4, 4);
  auto x = torch::randn({3, 4}, torch::requires_grad());
  auto h = x * 2;
  auto out = tft::checkpoint::checkpoint(
      [&](const TensorVector& in) { return TensorVector{layer(in[0])}; }, {h}, layer->parameters());
  {
    torch::NoGradGuard no_grad;
    h.add_(1);  // the saved input changed after forward
  }
  TFT_ASSERT_THROWS_WITH(out[0].sum().backward(), c10::Error, "inplace operation");
}

TFT_TEST(second_order_gradients_match) {
  torch::manual_seed(11);
  auto w = torch::randn({5}, torch::requires_grad());
  auto segment = [&](const TensorVector& in) { return TensorVector{(in[0].pow(3) * w).sin()}; };
  auto grad_of_grad = [&](bool checkpointed) {
    auto x = torch::linspace(-1, 1, 5).requires_grad_(true);
    auto y = checkpointed ? tft::checkpoint::checkpoint(segment, {x}, {w})[0] : segment({x})[0];
    auto gx = torch::autograd::grad({y.sum()}, {x}, {}, true, /*create_graph=*/true)[0];
    return torch::autograd::grad({gx.sum()}, {x, w})[0];
  };
  assert_true(torch::equal(grad_of_grad(false), grad_of_grad(true)));
}

TFT_TEST(empty_function_is_rejected) {
  TFT_ASSERT_THROWS_WITH(tft::checkpoint::checkpoint({}, {torch::ones({1})}, {}), c10::Error,
                         "segment function is empty");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parity_across_arrangements),
      cmocka_unit_test(dropout_is_really_active),
      cmocka_unit_test(parameters_only),
      cmocka_unit_test(multiple_outputs_some_unused),
      cmocka_unit_test(nested_checkpoints),
      cmocka_unit_test(is_recomputing_flags_the_rerun_only),
      cmocka_unit_test(second_backward_is_a_clear_error),
      cmocka_unit_test(closure_is_freed_with_the_graph),
      cmocka_unit_test(no_grad_and_eval_run_plainly),
      cmocka_unit_test(train_flags_of_forward_are_used_in_recompute),
      cmocka_unit_test(in_place_change_before_backward_is_detected),
      cmocka_unit_test(second_order_gradients_match),
      cmocka_unit_test(empty_function_is_rejected),
  };
  return cmocka_run_group_tests_name("recompute", tests, nullptr, nullptr);
}
