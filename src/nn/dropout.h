// Dropout whose mask costs a fraction of LibTorch's on CPU.
//
// LibTorch's CPU dropout draws its mask with bernoulli_, one Mersenne-Twister number at a time
// on one thread: 11% of a reference training step and 17% of a fully checkpointed one (whose
// recompute draws every mask again), more than any operator but the matrix products. This
// module draws the same kind of mask (keep with probability 1 - p, kept values scaled by
// 1 / (1 - p)) from a Philox counter-based generator instead (philox_block.h: ATen's engine's
// numbers, 8 counters per AVX2 register): one 64-bit seed taken from the CPU generator per call,
// then every element's number depends only on that seed and the element's index, so the work
// splits over threads and vectorises, and the masks do not depend on the thread count. The mask
// is applied in the same pass that draws it; no mask tensor is made.
//
// Masks come from the generators installed on the thread (checkpoint/generators.h: a
// trainer's own), else LibTorch's default ones. Checkpointing needs nothing new: a recompute
// restores the generator, draws the same seed and so the same mask. On the CPU autograd keeps
// only the seed, not the mask: backward draws the mask again (a tensor the size of the input
// less held from forward to backward, the same numbers). On other devices the mask
// is a Bernoulli draw from the same source (a second kernel beside LibTorch's fused dropout,
// which can only draw from the shared default generator).
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tft {

// The mask for one call on `like`'s shape: 0 where dropped, 1 / (1 - p) where kept; same
// dtype and device, contiguous, no autograd history. Requires 0 < p < 1 and a CPU tensor.
torch::Tensor philox_dropout_mask(const torch::Tensor& like, double p);

// The CPU path's two halves, for fused functions that apply a dropout inside and draw its mask
// again in backward (linear_dropout_linear.h): a seed from the thread's CPU generator, taken as
// Dropout takes it, and x times the mask of (seed, p) in place, the numbers of Dropout's
// forward; `also`, when defined, is multiplied by the same mask in the same pass (a value and
// its gradient: one draw of the numbers, not two). Requires 0 < p < 1 and contiguous CPU
// tensors of one shape and dtype that autograd does not track.
std::uint64_t draw_dropout_seed();
void times_dropout_mask_(const torch::Tensor& x, double p, std::uint64_t seed,
                         const torch::Tensor& also = {});
// What Dropout's forward does in training mode (x itself for p == 0), without a module.
torch::Tensor training_dropout(const torch::Tensor& x, double p);

class DropoutImpl : public torch::nn::Module {
 public:
  explicit DropoutImpl(double p);

  // x itself in eval mode or with p == 0; otherwise x times a fresh mask.
  torch::Tensor forward(const torch::Tensor& x);

  double p() const { return p_; }

 private:
  double p_;
};
TORCH_MODULE(Dropout);

}  // namespace tft
