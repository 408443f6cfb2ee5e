#include "model/dropout.h"

#include "checkpoint/generators.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/PhiloxRNGEngine.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
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

}  // namespace

torch::Tensor philox_dropout_mask(const torch::Tensor& like, double p) {
  TORCH_CHECK(p > 0.0 && p < 1.0, "philox_dropout_mask: p must be in (0, 1), got ", p);
  TORCH_CHECK(like.device().is_cpu(), "philox_dropout_mask: CPU tensors only, got ", like.device());
  torch::NoGradGuard no_grad;
  torch::Tensor mask =
      at::empty(like.sizes(), like.options().memory_format(at::MemoryFormat::Contiguous));
  const int64_t n = mask.numel();
  if (n == 0) return mask;
  const uint64_t seed = draw_seed();
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

DropoutImpl::DropoutImpl(double p) : p_(p) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "Dropout: p must be in [0, 1), got ", p);
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p_ == 0.0) return x;
  if (x.device().is_cpu()) return x * philox_dropout_mask(x, p_);
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
