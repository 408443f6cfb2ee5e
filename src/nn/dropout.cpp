#include "nn/dropout.h"

#include "checkpoint/generators.h"
#include "nn/cpu_isa.h"
#include "nn/lane_math.h"
#include "nn/philox_block.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
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

// Element i takes number i % 4 of Philox counter i / 4 (the block generator's layout), so a
// thread starting at a block's first element just starts at its counter.
constexpr int64_t kGrainBlocks = 1024;  // 65,536 elements per task

}  // namespace

uint64_t draw_dropout_seed() {
  at::Generator generator = checkpoint::generator_for(c10::Device(c10::DeviceType::CPU));
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

namespace {

// The loops, once per instruction set (dropout_mask_rows.inc).
#define TFT_ROWS_FILE "nn/dropout_mask_rows.inc"
#include "nn/per_isa_kernels.inc"

// out[i] = src[i] * m[i] (or m[i] itself without src), m[i] = scale where number i is below
// `threshold` (kept), else 0: the same products as multiplying by the mask tensor, without it.
// src == out multiplies in place. `also`, when given, is multiplied by the same mask in place,
// from the same numbers.
template <typename T>
void scale_by_mask(const T* src, T* out, int64_t n, uint32_t threshold, T scale, uint64_t seed,
                   T* also = nullptr) {
  using W = decltype(lanes::widen(scale));
  const W kept = lanes::widen(scale);
  const int64_t blocks = (n + philox::kBlockNumbers - 1) / philox::kBlockNumbers;
  const philox::BlockFunction block = philox::best_block();
  auto copy = &portable::masked_copy<T, W>;
  auto in_place = &portable::masked_in_place<T, W>;
#ifdef TFT_CPU_X86
  if (cpu_isa() == CpuIsa::kAvx2) {
    copy = &avx2::masked_copy<T, W>;
    in_place = &avx2::masked_in_place<T, W>;
  }
#endif
  at::parallel_for(0, blocks, kGrainBlocks, [&](int64_t begin, int64_t end) {
    uint32_t numbers[philox::kBlockNumbers];
    for (int64_t b = begin; b < end; ++b) {
      block(seed, static_cast<uint64_t>(b) * philox::kBlockCounters, numbers);
      const int64_t first = b * philox::kBlockNumbers;
      const int64_t count = std::min<int64_t>(philox::kBlockNumbers, n - first);
      if (src == out) {
        in_place(numbers, count, threshold, kept, out + first);
      } else {
        copy(numbers, count, threshold, kept, src == nullptr ? nullptr : src + first, out + first);
      }
      if (also != nullptr) in_place(numbers, count, threshold, kept, also + first);
    }
  });
}

// x times the mask of `seed` (x undefined: the mask itself), contiguous, no autograd history.
// Keep when the 32-bit number is below keep * 2^32 (keep < 1, so this fits).
torch::Tensor times_mask(const torch::Tensor& like, const torch::Tensor& x, double p,
                         uint64_t seed) {
  torch::NoGradGuard no_grad;
  const torch::Tensor src = x.defined() ? x.contiguous() : torch::Tensor();
  torch::Tensor out =
      at::empty(like.sizes(), like.options().memory_format(at::MemoryFormat::Contiguous));
  const int64_t n = out.numel();
  if (n == 0) return out;
  const auto threshold = static_cast<uint32_t>((1.0 - p) * 4294967296.0);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "dropout_mask", [&] {
    scale_by_mask<scalar_t>(src.defined() ? src.data_ptr<scalar_t>() : nullptr,
                            out.data_ptr<scalar_t>(), n, threshold,
                            static_cast<scalar_t>(1.0 / (1.0 - p)), seed);
  });
  return out;
}

// x times a fresh mask that autograd does not keep: backward draws it again from its seed (a
// few cycles an element) instead of holding a tensor the size of x until then. The numbers are
// those of x * philox_dropout_mask(x, p), forward and backward alike.
class RegeneratedMaskDropout : public torch::autograd::Function<RegeneratedMaskDropout> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               double p) {
    // No seed for an empty tensor, as philox_dropout_mask: the generator moves alike either way.
    const uint64_t seed = x.numel() == 0 ? 0 : draw_dropout_seed();
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    ctx->saved_data["p"] = p;
    return times_mask(x, x, p, seed);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto seed = static_cast<uint64_t>(ctx->saved_data["seed"].toInt());
    const double p = ctx->saved_data["p"].toDouble();
    const torch::Tensor& grad = grads[0];
    if (!grad.defined()) return {torch::Tensor(), torch::Tensor()};
    return {times_mask(grad, grad, p, seed), torch::Tensor()};
  }
};

}  // namespace

void times_dropout_mask_(const torch::Tensor& x, double p, uint64_t seed,
                         const torch::Tensor& also) {
  TORCH_CHECK(p > 0.0 && p < 1.0, "times_dropout_mask_: p must be in (0, 1), got ", p);
  for (const torch::Tensor* t : {&x, &also}) {
    if (!t->defined()) continue;
    TORCH_CHECK(t->device().is_cpu() && t->is_contiguous() && t->sizes() == x.sizes() &&
                    t->scalar_type() == x.scalar_type(),
                "times_dropout_mask_: contiguous CPU tensors of one shape and dtype only, got ",
                t->sizes(), " ", t->scalar_type(), " on ", t->device(),
                t->is_contiguous() ? "" : " (not contiguous)");
  }
  const int64_t n = x.numel();
  if (n == 0) return;
  const auto threshold = static_cast<uint32_t>((1.0 - p) * 4294967296.0);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "dropout_mask_", [&] {
    // Element by element, each read before it is written: in place is safe.
    scale_by_mask<scalar_t>(x.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), n, threshold,
                            static_cast<scalar_t>(1.0 / (1.0 - p)), seed,
                            also.defined() ? also.data_ptr<scalar_t>() : nullptr);
  });
}

torch::Tensor philox_dropout_mask(const torch::Tensor& like, double p) {
  TORCH_CHECK(p > 0.0 && p < 1.0, "philox_dropout_mask: p must be in (0, 1), got ", p);
  TORCH_CHECK(like.device().is_cpu(), "philox_dropout_mask: CPU tensors only, got ", like.device());
  const int64_t n = like.numel();
  return times_mask(like, torch::Tensor(), p, n == 0 ? 0 : draw_dropout_seed());
}

DropoutImpl::DropoutImpl(double p) : p_(p) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "Dropout: p must be in [0, 1), got ", p);
}

torch::Tensor training_dropout(const torch::Tensor& x, double p) {
  if (p == 0.0) return x;
  if (x.device().is_cpu()) return RegeneratedMaskDropout::apply(x, p);
  // Elsewhere a Bernoulli mask from this thread's generator for the device (LibTorch's fused
  // dropout would draw from its shared default generator).
  torch::Tensor mask;
  {
    torch::NoGradGuard no_grad;
    mask = at::empty_like(x).bernoulli_(1.0 - p, checkpoint::generator_for(x.device()));
    mask.div_(1.0 - p);
  }
  return x * mask;
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  return is_training() ? training_dropout(x, p_) : x;
}

}  // namespace tft
