// The one place where LibTorch 1.13 (Debian) and 2.x (PyPI wheel) differ in APIs we use.
// Everything else in the project is written against the common subset.
#pragma once

#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <torch/version.h>

#define TFT_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||      \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator::allocate lost its const in 2.3, which also added the pure virtual copy_data.
#if TFT_TORCH_AT_LEAST(2, 3)
#define TFT_ALLOCATE_CONST
#define TFT_ALLOCATOR_HAS_COPY_DATA 1
#else
#define TFT_ALLOCATE_CONST const
#define TFT_ALLOCATOR_HAS_COPY_DATA 0
#endif

namespace tft::compat {

// Autocast state of one device type (CPU or CUDA). 2.4 replaced the per-device functions
// (is_cpu_enabled, get_autocast_gpu_dtype, ...) by ones taking a DeviceType.
struct AutocastState {
  bool enabled = false;
  at::ScalarType dtype = at::kFloat;
};

inline AutocastState get_autocast_state(c10::DeviceType device) {
#if TFT_TORCH_AT_LEAST(2, 4)
  return {at::autocast::is_autocast_enabled(device), at::autocast::get_autocast_dtype(device)};
#else
  if (device == c10::DeviceType::CPU) {
    return {at::autocast::is_cpu_enabled(), at::autocast::get_autocast_cpu_dtype()};
  }
  return {at::autocast::is_enabled(), at::autocast::get_autocast_gpu_dtype()};
#endif
}

inline void set_autocast_state(c10::DeviceType device, const AutocastState& state) {
#if TFT_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device, state.enabled);
  at::autocast::set_autocast_dtype(device, state.dtype);
#else
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(state.enabled);
    at::autocast::set_autocast_cpu_dtype(state.dtype);
  } else {
    at::autocast::set_enabled(state.enabled);
    at::autocast::set_autocast_gpu_dtype(state.dtype);
  }
#endif
}

}  // namespace tft::compat
