// Mixed precision with one cast per weight per forward pass, the same under every checkpoint
// strategy (issue 40).
//
// Autocast casts a float32 weight to the reduced dtype at every product that reads it. Its own
// cache of casts stays off (nn/precision.h: a cast cached during a checkpointed segment's
// graph-free forward has no graph, and the cache outlives the step), so a weight was cast at
// each use: once per time chunk, again in each recompute, and its gradient converted back at
// each use. Here the model casts every weight that a product reads once, at the start of the
// pass and in its autograd graph, and the products read that copy (product_operand). The
// segments of checkpointed units take the copies as their parameters (model/segment.h), so a
// recompute reads them again instead of casting, and their gradients meet once, at the cast.
//
// What this changes numerically: a weight's gradient is summed over its uses in the reduced
// dtype before the cast's backward turns it into float32, as torch.autocast with its cache on
// (Lightning's bf16-mixed) does; per-use casts summed each use's float32 gradient.
#pragma once

#include "common/thread_slot.h"

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace torch::nn {
class Module;
}

namespace tft {

class WeightCasts {
 public:
  // `parameters` cast to `dtype`, recorded in the autograd graph when grad mode is on.
  WeightCasts(const std::vector<at::Tensor>& parameters, at::ScalarType dtype);

  // The cast of `parameter`, or null when it has none.
  const at::Tensor* find(const at::Tensor& parameter) const;
  std::size_t size() const { return casts_.size(); }
  at::ScalarType dtype() const { return dtype_; }

 private:
  at::ScalarType dtype_;
  std::unordered_map<const c10::TensorImpl*, at::Tensor> casts_;
};

// Installs a pass's casts on this thread for the scope's lifetime.
using WeightCastsScope = ThreadSlot<WeightCasts>::Scope;

// What a matrix product reads for `parameter`: its cast when the casts installed on this thread
// have one, else `parameter` itself.
at::Tensor product_operand(const at::Tensor& parameter);

// `t` (made from parameters, say stacked) in the dtype of the casts installed on this thread,
// else `t` itself: for operands that are cast once as a whole rather than per parameter.
at::Tensor cast_for_products(const at::Tensor& t);

// The parameters of `root`'s tree that only matrix products read: every QuantizableLinear's
// weight and bias (not under QAT, whose fake quantizers read the float32 weight) and every
// LSTM's weights. Each must be read through product_operand wherever the forward reads it.
// A variable selection's per-variable GRNs are left out: their products read them stacked,
// and the stack is cast as a whole (VariableSelectionNetworkImpl::stacked_variable_grns).
std::vector<at::Tensor> product_parameters(const torch::nn::Module& root);

}  // namespace tft
