// Adam with its update as one fused ATen kernel over all parameters (at::_fused_adam_), instead
// of LibTorch's loop of about ten operator calls per parameter (mul_, add_, addcmul_, sqrt, div,
// add_, addcdiv_ and the scalars they wrap). The host-bound reference step spends 2,300 of its
// 30,000 operator calls there; on a GPU each would be a kernel launch.
//
// It is torch::optim::Adam in every other respect: the same options and the same per-parameter
// state (AdamParamState), so snapshots written by either load into the other. The arithmetic is
// Adam's formula evaluated per element in one pass, which rounds differently in the last bits
// from the loop's; runs stay deterministic. Where LibTorch has no fused kernel for the device
// (before 2.4 on the CPU, before 2.0 on CUDA), for sparse or mixed-device parameters, it runs
// torch::optim::Adam::step itself.
//
// With a decoupled weight decay it is AdamW (Loshchilov & Hutter; torch.optim.AdamW and
// torch::optim::AdamW): every parameter with a gradient first shrinks by p -= lr * wd * p, then
// takes Adam's step, in one at::_fused_adamw_ call (or the same two operations in the fallback).
// The decay is this class's, not AdamOptions' weight_decay (Adam's L2 term added to the
// gradient, which must stay 0 beside it); it applies to every parameter given (biases,
// LayerNorm weights and embeddings included), as AdamW over model.parameters() does. It is not
// in the optimizer's saved state: whoever builds the optimizer passes it again.
#pragma once

#include <torch/optim/adam.h>

#include <vector>

namespace tft {

class FusedAdam : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;

  // AdamW's decoupled `weight_decay` (>= 0; 0 is plain Adam); options.weight_decay() must be 0.
  FusedAdam(const std::vector<torch::Tensor>& params, const torch::optim::AdamOptions& options,
            double weight_decay);

  torch::Tensor step(LossClosure closure = nullptr) override;

  double decoupled_weight_decay() const { return weight_decay_; }

 private:
  // torch::optim::Adam::step, after the decoupled decay when there is one.
  torch::Tensor unfused_step(LossClosure closure);

  double weight_decay_ = 0.0;
};

}  // namespace tft
