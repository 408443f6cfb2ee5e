// A stack of pre-norm residual MLP blocks with dropout: the smallest model on which gradient
// checkpointing is worth doing, used by the checkpointing demo (examples/demo) and the recompute
// tests.
#pragma once

#include "checkpoint/recompute.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/functional/activation.h>

#include <functional>
#include <vector>

namespace tft {

// x + Dropout(W2 · GELU(W1 · LayerNorm(x)))
class ResidualBlockImpl : public torch::nn::Module {
 public:
  ResidualBlockImpl(int64_t width, int64_t hidden, double dropout)
      : norm_(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})))),
        expand_(register_module("expand", torch::nn::Linear(width, hidden))),
        project_(register_module("project", torch::nn::Linear(hidden, width))),
        dropout_(register_module("dropout", torch::nn::Dropout(dropout))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::gelu(expand_(norm_(x)));
    return x + dropout_(project_(h));
  }

 private:
  torch::nn::LayerNorm norm_;
  torch::nn::Linear expand_, project_;
  torch::nn::Dropout dropout_;
};
TORCH_MODULE(ResidualBlock);

class ResidualStackImpl : public torch::nn::Module {
 public:
  ResidualStackImpl(int64_t width, int64_t hidden, int64_t depth, double dropout) {
    for (int64_t i = 0; i < depth; ++i) {
      blocks_.push_back(
          register_module("block" + std::to_string(i), ResidualBlock(width, hidden, dropout)));
    }
  }

  size_t depth() const { return blocks_.size(); }

  // Runs every block; those for which checkpointed(i) is true keep no activations.
  torch::Tensor forward(torch::Tensor x, const std::function<bool(size_t)>& checkpointed = {}) {
    for (size_t i = 0; i < blocks_.size(); ++i) {
      ResidualBlock block = blocks_[i];
      if (checkpointed && checkpointed(i)) {
        x = checkpoint::checkpoint_module(block.ptr(),
                                          [block](const checkpoint::TensorVector& in) mutable {
                                            return checkpoint::TensorVector{block->forward(in[0])};
                                          },
                                          {x})[0];
      } else {
        x = block->forward(x);
      }
    }
    return x;
  }

 private:
  std::vector<ResidualBlock> blocks_;
};
TORCH_MODULE(ResidualStack);

}  // namespace tft
