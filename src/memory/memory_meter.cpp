#include "memory/memory_meter.h"

#include "common/error.h"
#include "memory/tracking_allocator.h"

#include <algorithm>

#ifdef TFT_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace tft::memory {
namespace {

#ifdef TFT_WITH_CUDA
const c10::cuda::CUDACachingAllocator::Stat& cuda_allocated(c10::DeviceIndex index) {
  thread_local c10::cuda::CUDACachingAllocator::DeviceStats stats;
  stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  return stats.allocated_bytes[static_cast<size_t>(
      c10::cuda::CUDACachingAllocator::StatType::AGGREGATE)];
}
#endif

}  // namespace

MemoryMeter::MemoryMeter(c10::Device device) : device_(device) {
  if (device.is_cpu()) {
    cpu_scope_ = std::make_unique<CpuMemoryTrackingScope>();
    return;
  }
#ifdef TFT_WITH_CUDA
  if (device.is_cuda()) {
    if (!device.has_index()) device_ = c10::Device(c10::DeviceType::CUDA, c10::cuda::current_device());
    return;
  }
#endif
  throw Error("memory meter: device '" + device.str() +
              "' is not supported by this build (CPU" +
#ifdef TFT_WITH_CUDA
              std::string(" and CUDA") +
#else
              std::string(" only; rebuild with -DTFT_WITH_CUDA=ON for CUDA") +
#endif
              ")");
}

MemoryMeter::~MemoryMeter() = default;

std::int64_t MemoryMeter::current_bytes() const {
#ifdef TFT_WITH_CUDA
  if (device_.is_cuda()) return cuda_allocated(device_.index()).current;
#endif
  return cpu_memory_counters().current_bytes;
}

std::int64_t MemoryMeter::peak_bytes() const {
#ifdef TFT_WITH_CUDA
  if (device_.is_cuda()) return cuda_allocated(device_.index()).peak;
#endif
  return cpu_memory_counters().peak_bytes;
}

void MemoryMeter::reset_peak() {
#ifdef TFT_WITH_CUDA
  if (device_.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device_.index());
    return;
  }
#endif
  reset_cpu_peak();
}

ActivationProbe::ActivationProbe(MemoryMeter& meter)
    : meter_(meter), baseline_(meter.current_bytes()) {
  meter_.reset_peak();
}

std::int64_t ActivationProbe::activation_peak_bytes() const {
  return std::max<std::int64_t>(0, meter_.peak_bytes() - baseline_);
}

}  // namespace tft::memory
