// The one place where LibTorch 1.13 (Debian) and 2.x (PyPI wheel) differ in APIs we use.
// Everything else in the project is written against the common subset.
#pragma once

#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

#ifdef TFT_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

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

// at::_fused_adam_: one kernel for a whole Adam step; CUDA from 2.0, the CPU from 2.4.
#define TFT_HAS_FUSED_ADAM TFT_TORCH_AT_LEAST(2, 4)

// c10d's process groups (Gloo, NCCL) derive from c10d::Backend from 2.0 on, from
// c10d::ProcessGroup in 1.13; both declare the collectives src/distributed uses.
namespace c10d {
class Backend;
class ProcessGroup;
}  // namespace c10d
namespace tft::compat {
#if TFT_TORCH_AT_LEAST(2, 0)
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif
}  // namespace tft::compat

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

// A parameter's state in an optimizer, or nullptr. The state map's key is the address of the
// parameter's TensorImpl: a pointer in 2.x, the pointer's text (as ostream writes it) in 1.13.
// (A template, so that only the branch of this LibTorch's key type is compiled.)
template <typename Optimizer>
torch::optim::OptimizerParamState* optimizer_state(Optimizer& optimizer,
                                                   const at::Tensor& parameter) {
  auto& states = optimizer.state();
  using Key = typename std::decay_t<decltype(states)>::key_type;
  Key key{};
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;
    text << parameter.unsafeGetTensorImpl();
    key = text.str();
  } else {
    key = parameter.unsafeGetTensorImpl();
  }
  const auto it = states.find(key);
  return it == states.end() ? nullptr : it->second.get();
}

#ifdef TFT_WITH_CUDA
// Bytes held by tensors on one CUDA device, as the caching allocator counts them (all pools).
struct CudaAllocatedBytes {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t reserved = 0;  // held from the device in segments, allocated or not
};

// The allocator's stats types moved from c10::cuda::CUDACachingAllocator to the device-generic
// c10::CachingDeviceAllocator (2.6), whose header says which one this LibTorch has.
inline CudaAllocatedBytes cuda_allocated_bytes(c10::DeviceIndex device) {
#if __has_include(<c10/core/CachingDeviceAllocator.h>)
  using c10::CachingDeviceAllocator::StatType;
#else
  using c10::cuda::CUDACachingAllocator::StatType;
#endif
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  const auto& all = stats.allocated_bytes[static_cast<std::size_t>(StatType::AGGREGATE)];
  const auto& reserved = stats.reserved_bytes[static_cast<std::size_t>(StatType::AGGREGATE)];
  return {all.current, all.peak, reserved.current};
}
#endif

}  // namespace tft::compat
