#include "nn/dropout.h"

#include "checkpoint/generators.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/PhiloxRNGEngine.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

namespace tft {
namespace {

// Philox gives four 32-bit numbers per counter value: element i uses number i % 4 of counter
// i / 4, so a thread starting at a multiple of four elements just sets the counter there.
constexpr int64_t kPerCounter = 4;
constexpr int64_t kGrainCounters = 1 << 14;

uint64_t draw_seed() {
  at::Generator generator = checkpoint::generator_for(c10::Device(c10::DeviceType::CPU));
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

// The mask for `seed` (philox_dropout_mask's, with the seed given).
torch::Tensor philox_mask_from_seed(const torch::Tensor& like, double p, uint64_t seed) {
  torch::NoGradGuard no_grad;
  torch::Tensor mask =
      at::empty(like.sizes(), like.options().memory_format(at::MemoryFormat::Contiguous));
  const int64_t n = mask.numel();
  if (n == 0) return mask;
  // Keep when the 32-bit number is below keep * 2^32 (keep < 1, so this fits).
  const auto threshold = static_cast<uint32_t>((1.0 - p) * 4294967296.0);
  const int64_t counters = (n + kPerCounter - 1) / kPerCounter;
  const auto dtype = mask.scalar_type();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "philox_dropout_mask", [&] {
    const auto scale = static_cast<scalar_t>(1.0 / (1.0 - p));
    const auto zero = static_cast<scalar_t>(0);
    scalar_t* out = mask.data_ptr<scalar_t>();
    at::parallel_for(0, counters, kGrainCounters, [&](int64_t begin, int64_t end) {
      at::Philox4_32 engine(seed, /*subsequence=*/0, /*offset=*/static_cast<uint64_t>(begin));
      const int64_t last = std::min(n, end * kPerCounter);
      for (int64_t i = begin * kPerCounter; i < last; ++i) {
        out[i] = engine() < threshold ? scale : zero;
      }
    });
  });
  return mask;
}

// x times a fresh mask that autograd does not keep: backward draws it again from its seed (a
// few cycles an element) instead of holding a tensor the size of x until then. The numbers are
// those of x * philox_dropout_mask(x, p), forward and backward alike.
class RegeneratedMaskDropout : public torch::autograd::Function<RegeneratedMaskDropout> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               double p) {
    // No seed for an empty tensor, as philox_dropout_mask: the generator moves alike either way.
    const uint64_t seed = x.numel() == 0 ? 0 : draw_seed();
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    ctx->saved_data["p"] = p;
    return x * philox_mask_from_seed(x, p, seed);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto seed = static_cast<uint64_t>(ctx->saved_data["seed"].toInt());
    const double p = ctx->saved_data["p"].toDouble();
    const torch::Tensor& grad = grads[0];
    if (!grad.defined()) return {torch::Tensor(), torch::Tensor()};
    return {grad * philox_mask_from_seed(grad, p, seed), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor philox_dropout_mask(const torch::Tensor& like, double p) {
  TORCH_CHECK(p > 0.0 && p < 1.0, "philox_dropout_mask: p must be in (0, 1), got ", p);
  TORCH_CHECK(like.device().is_cpu(), "philox_dropout_mask: CPU tensors only, got ", like.device());
  const int64_t n = like.numel();
  return philox_mask_from_seed(like, p, n == 0 ? 0 : draw_seed());
}

DropoutImpl::DropoutImpl(double p) : p_(p) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "Dropout: p must be in [0, 1), got ", p);
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p_ == 0.0) return x;
  if (x.device().is_cpu()) return RegeneratedMaskDropout::apply(x, p_);
  // Elsewhere a Bernoulli mask from this thread's generator for the device (LibTorch's fused
  // dropout would draw from its shared default generator).
  torch::Tensor mask;
  {
    torch::NoGradGuard no_grad;
    mask = at::empty_like(x).bernoulli_(1.0 - p_, checkpoint::generator_for(x.device()));
    mask.div_(1.0 - p_);
  }
  return x * mask;
}

}  // namespace tft
