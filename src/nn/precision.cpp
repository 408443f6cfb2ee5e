#include "nn/precision.h"

#include <ATen/ops/softmax.h>

#include "common/torch_compat.h"

namespace tft {

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::Float32: return "32";
    case Precision::Bf16Mixed: return "bf16-mixed";
    case Precision::Fp16Mixed: return "16-mixed";
  }
  return "32";
}

std::optional<Precision> precision_from_string(const std::string& text) {
  if (text == "32" || text == "32-true") return Precision::Float32;
  if (text == "bf16-mixed") return Precision::Bf16Mixed;
  if (text == "16-mixed") return Precision::Fp16Mixed;
  return std::nullopt;
}

std::optional<at::ScalarType> autocast_dtype(Precision precision) {
  switch (precision) {
    case Precision::Float32: return std::nullopt;
    case Precision::Bf16Mixed: return at::kBFloat16;
    case Precision::Fp16Mixed: return at::kHalf;
  }
  return std::nullopt;
}

bool is_reduced_float(at::ScalarType dtype) { return dtype == at::kBFloat16 || dtype == at::kHalf; }

at::Tensor reduced_to_float(const at::Tensor& t) {
  return t.defined() && is_reduced_float(t.scalar_type()) ? t.to(at::kFloat) : t;
}

at::Tensor softmax_in_float(const at::Tensor& x, std::int64_t dim) {
  if (is_reduced_float(x.scalar_type())) return at::softmax(x, dim, at::kFloat);
  return at::softmax(x, dim);
}

AutocastScope::AutocastScope(Precision precision, c10::DeviceType device) : device_(device) {
  const std::optional<at::ScalarType> dtype = autocast_dtype(precision);
  if (!dtype) return;
  const compat::AutocastState previous = compat::get_autocast_state(device);
  was_enabled_ = previous.enabled;
  previous_dtype_ = previous.dtype;
  previous_cache_ = at::autocast::is_autocast_cache_enabled();
  compat::set_autocast_state(device, {true, *dtype});
  at::autocast::set_autocast_cache_enabled(false);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // Leaving the outermost autocast region empties its cache, as torch.autocast's __exit__ does.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_cache_enabled(previous_cache_);
  compat::set_autocast_state(device_, {was_enabled_, previous_dtype_});
}

}  // namespace tft
