#include "nn/fake_quantizer.h"

#include "checkpoint/recompute.h"

#include <ATen/ops/fake_quantize_per_channel_affine.h>
#include <ATen/ops/fake_quantize_per_tensor_affine.h>
#include <ATen/ops/aminmax.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <limits>

namespace tft {
namespace {

// PyTorch's observers keep the scale at least float32's epsilon (a constant tensor: zero range).
constexpr double kMinScale = std::numeric_limits<float>::epsilon();

}  // namespace

FakeQuantizerImpl::FakeQuantizerImpl(QuantizationScheme scheme, std::int64_t bits,
                                     std::int64_t channels)
    : scheme_(scheme) {
  TORCH_CHECK(bits >= 2 && bits <= 8, "FakeQuantizer: bits must be in [2, 8], got ", bits);
  TORCH_CHECK(channels >= 1, "FakeQuantizer: channels must be at least 1, got ", channels);
  if (scheme == QuantizationScheme::PerTensorAffine) {
    TORCH_CHECK(channels == 1, "FakeQuantizer: a per-tensor quantizer has one channel");
    quant_min_ = 0;
    quant_max_ = (std::int64_t{1} << bits) - 1;
  } else {
    quant_min_ = -(std::int64_t{1} << (bits - 1));
    quant_max_ = (std::int64_t{1} << (bits - 1)) - 1;
  }
  const auto floats = at::TensorOptions().dtype(at::kFloat);
  running_min_ = register_buffer("running_min", at::zeros({channels}, floats));
  running_max_ = register_buffer("running_max", at::zeros({channels}, floats));
  scale_ = register_buffer("scale", at::ones({channels}, floats));
  // LibTorch's fake-quantize kernels read int32 zero points.
  zero_point_ = register_buffer("zero_point", at::zeros({channels}, floats.dtype(at::kInt)));
  calibrated_flag_ = register_buffer("calibrated", at::zeros({1}, floats.dtype(at::kLong)));
}

at::Tensor FakeQuantizerImpl::forward(const at::Tensor& x) {
  if (observing_ && is_training() && !checkpoint::is_recomputing()) observe(x);
  if (!calibrated_) return x;
  // The kernels take float32; a reduced-precision activation (autocast) is rounded in float32
  // and handed back in its own dtype.
  const bool is_float = x.scalar_type() == at::kFloat;
  const at::Tensor input = is_float ? x : x.to(at::kFloat);
  at::Tensor out;
  if (scheme_ == QuantizationScheme::PerTensorAffine) {
    out = at::fake_quantize_per_tensor_affine(input, scale_, zero_point_, quant_min_, quant_max_);
  } else {
    out = at::fake_quantize_per_channel_affine(input, scale_, zero_point_, /*axis=*/0, quant_min_,
                                               quant_max_);
  }
  return is_float ? out : out.to(x.scalar_type());
}

void FakeQuantizerImpl::observe(const at::Tensor& x) {
  if (x.numel() == 0) return;
  // A weight is the same tensor in every chunk of a step: once is enough.
  if (scheme_ == QuantizationScheme::PerChannelSymmetric && !step_min_.empty()) return;
  const torch::NoGradGuard no_grad;
  const at::Tensor values = x.detach().to(at::kFloat);
  // One reduction per call; the calls of a step are folded together at the commit.
  auto [low, high] = scheme_ == QuantizationScheme::PerTensorAffine
                         ? at::aminmax(values)
                         : at::aminmax(values.reshape({values.size(0), -1}), /*dim=*/1);
  step_min_.push_back(low.reshape({-1}));
  step_max_.push_back(high.reshape({-1}));
}

void FakeQuantizerImpl::discard_observations() {
  step_min_.clear();
  step_max_.clear();
}

void FakeQuantizerImpl::commit_observations() {
  if (step_min_.empty()) return;
  const torch::NoGradGuard no_grad;
  const at::Tensor step_low = std::get<0>(at::stack(step_min_).min(/*dim=*/0));
  const at::Tensor step_high = std::get<0>(at::stack(step_max_).max(/*dim=*/0));
  discard_observations();
  if (calibrated_) {
    running_min_.lerp_(step_low, kAveragingConstant);
    running_max_.lerp_(step_high, kAveragingConstant);
  } else {
    running_min_.copy_(step_low);
    running_max_.copy_(step_high);
  }
  const double levels = static_cast<double>(quant_max_ - quant_min_);
  if (scheme_ == QuantizationScheme::PerTensorAffine) {
    // The range always holds 0, so that 0 (padding, ReLU-like zeros) is exact.
    const at::Tensor low = running_min_.clamp_max(0.0), high = running_max_.clamp_min(0.0);
    const at::Tensor scale = ((high - low) / levels).clamp_min(kMinScale);
    scale_.copy_(scale);
    zero_point_.copy_(
        (static_cast<double>(quant_min_) - (low / scale).round()).clamp(quant_min_, quant_max_));
  } else {
    const at::Tensor magnitude = at::maximum(running_min_.neg(), running_max_);
    scale_.copy_((magnitude / (levels / 2.0)).clamp_min(kMinScale));
    zero_point_.zero_();
  }
  calibrated_flag_.fill_(1);
  calibrated_ = true;
}

void FakeQuantizerImpl::refresh() {
  calibrated_ = calibrated_flag_.item<std::int64_t>() != 0;
  discard_observations();
}

std::vector<FakeQuantizer> fake_quantizers(torch::nn::Module& root) {
  std::vector<FakeQuantizer> found;
  // Children only: the root may be a module under construction, not owned by a shared_ptr yet.
  for (const auto& module : root.modules(/*include_self=*/false)) {
    if (auto quantizer = std::dynamic_pointer_cast<FakeQuantizerImpl>(module)) {
      found.emplace_back(std::move(quantizer));
    }
  }
  return found;
}

void set_fake_quantizers_observing(torch::nn::Module& root, bool observing) {
  for (auto& q : fake_quantizers(root)) q->set_observing(observing);
}

void discard_fake_quantizer_observations(torch::nn::Module& root) {
  for (auto& q : fake_quantizers(root)) q->discard_observations();
}

void commit_fake_quantizer_observations(torch::nn::Module& root) {
  for (auto& q : fake_quantizers(root)) q->commit_observations();
}

void refresh_fake_quantizers(torch::nn::Module& root) {
  for (auto& q : fake_quantizers(root)) q->refresh();
}

std::vector<at::Tensor> fake_quantizer_buffers(torch::nn::Module& root) {
  std::vector<at::Tensor> buffers;
  for (auto& q : fake_quantizers(root)) {
    for (const auto& b : q->buffers(/*recurse=*/false)) buffers.push_back(b);
  }
  return buffers;
}

}  // namespace tft
