// Initial weights drawn from a given generator.
//
// LibTorch's module constructors draw their initial weights from its shared default CPU
// generator, so two trainers building models at once on two threads would interleave draws.
// initialize_parameters draws every parameter again from the generator it is given (a
// trainer's own: checkpoint/generators.h), with the distributions those constructors use.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/nn/module.h>

namespace tft {

// A module with parameters of its own (not a LibTorch layer's) says how they start.
class InitializedModule {
 public:
  virtual ~InitializedModule() = default;
  virtual void initialize_own_parameters(at::Generator generator) = 0;
};

// Redraws the parameters of `root` and of every module under it, in pre-order:
//   Linear      weight and bias U(-1/sqrt(in), 1/sqrt(in)) (LibTorch's kaiming_uniform with
//               a = sqrt(5), and its bias rule)
//   LSTM        every parameter U(-1/sqrt(hidden), 1/sqrt(hidden))
//   Embedding   weight N(0, 1)
//   LayerNorm   unchanged (weight 1, bias 0: nothing random)
//   an InitializedModule: its own rule.
// Throws InvalidArgumentError for a module with parameters of its own and no rule.
void initialize_parameters(torch::nn::Module& root, at::Generator generator);

}  // namespace tft
