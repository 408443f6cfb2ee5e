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
#pragma once

#include <torch/optim/adam.h>

namespace tft {

class FusedAdam : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;

  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace tft
