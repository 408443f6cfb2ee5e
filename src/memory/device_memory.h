// How much memory a CUDA device has left for tensors: what the driver reports free
// (cudaMemGetInfo) plus what LibTorch's caching allocator holds reserved but has not handed
// out (it reuses those blocks before asking the driver for more). Read by the budget planner
// for checkpoint.memory_budget: auto (train/memory_budget_resolution.h).
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

namespace tft::memory {

struct DeviceMemory {
  std::int64_t total_bytes = 0;
  std::int64_t driver_free_bytes = 0;       // cudaMemGetInfo's free
  std::int64_t allocator_unused_bytes = 0;  // reserved by the caching allocator, not allocated
  std::int64_t allocated_bytes = 0;         // held by tensors now

  std::int64_t available_bytes() const { return driver_free_bytes + allocator_unused_bytes; }
};

// UnsupportedError for a CPU device or a build without CUDA (TFT_WITH_CUDA).
DeviceMemory cuda_device_memory(const c10::Device& device);

}  // namespace tft::memory
