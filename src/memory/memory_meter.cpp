#include "memory/memory_meter.h"

#include "common/error.h"
#include "memory/tracking_allocator.h"

#include <algorithm>

#ifdef TFT_WITH_CUDA
#include "common/torch_compat.h"

#include <ATen/ops/empty.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace tft::memory {

MemoryMeter::MemoryMeter(c10::Device device)
    : device_(device), cpu_account_(current_cpu_memory_account()) {
  if (device.is_cpu()) {
    cpu_scope_ = std::make_unique<CpuMemoryTrackingScope>();
    return;
  }
#ifdef TFT_WITH_CUDA
  if (device.is_cuda()) {
    if (!device.has_index()) {
      device_ = c10::Device(c10::DeviceType::CUDA, c10::cuda::current_device());
    }
    // The allocator's statistics exist once CUDA is initialised, which allocating does.
    (void)at::empty({0}, at::TensorOptions().device(device_));
    return;
  }
#endif
  throw Error("memory meter: device '" + device.str() + "' is not supported by this build (CPU" +
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
  if (device_.is_cuda()) return compat::cuda_allocated_bytes(device_.index()).current;
#endif
  return cpu_counters().current_bytes;
}

std::int64_t MemoryMeter::peak_bytes() const {
#ifdef TFT_WITH_CUDA
  if (device_.is_cuda()) return compat::cuda_allocated_bytes(device_.index()).peak;
#endif
  return cpu_counters().peak_bytes;
}

void MemoryMeter::reset_peak() {
#ifdef TFT_WITH_CUDA
  if (device_.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device_.index());
    return;
  }
#endif
  if (cpu_account_) {
    cpu_account_->reset_peak();
  } else {
    reset_cpu_peak();
  }
}

CpuMemoryCounters MemoryMeter::cpu_counters() const {
  return cpu_account_ ? cpu_account_->counters() : cpu_memory_counters();
}

ActivationProbe::ActivationProbe(MemoryMeter& meter)
    : meter_(meter), baseline_(meter.current_bytes()) {
  meter_.reset_peak();
}

std::int64_t ActivationProbe::activation_peak_bytes() const {
  return std::max<std::int64_t>(0, meter_.peak_bytes() - baseline_);
}

}  // namespace tft::memory
