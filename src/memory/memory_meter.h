// One small interface over "how many bytes do tensors hold on this device", used by the
// trainer and the benchmarks: the tracking allocator on CPU, the caching allocator's
// statistics on CUDA.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>

namespace tft::memory {

class CpuMemoryTrackingScope;
class CpuMemoryAccount;
struct CpuMemoryCounters;

class MemoryMeter {
 public:
  // On CPU this installs the tracking allocator for the meter's lifetime and reads the CPU
  // memory account installed on this thread when the meter is made (tracking_allocator.h), or
  // the process-wide counters without one; on CUDA it reads the caching allocator's statistics
  // for the whole device (needs a TFT_WITH_CUDA build, else throws tft::Error).
  explicit MemoryMeter(c10::Device device);
  ~MemoryMeter();
  MemoryMeter(const MemoryMeter&) = delete;
  MemoryMeter& operator=(const MemoryMeter&) = delete;

  c10::Device device() const { return device_; }
  std::int64_t current_bytes() const;
  std::int64_t peak_bytes() const;
  // Starts a new peak window at the current level.
  void reset_peak();

 private:
  CpuMemoryCounters cpu_counters() const;

  c10::Device device_;
  std::shared_ptr<CpuMemoryAccount> cpu_account_;
  std::unique_ptr<CpuMemoryTrackingScope> cpu_scope_;
};

// Activation memory of a region (say, one training step): the peak reached inside it minus
// the bytes already held when it began (weights, optimizer state, inputs).
class ActivationProbe {
 public:
  explicit ActivationProbe(MemoryMeter& meter);
  std::int64_t baseline_bytes() const { return baseline_; }
  // Peak since construction, above the baseline (never negative).
  std::int64_t activation_peak_bytes() const;

 private:
  MemoryMeter& meter_;
  std::int64_t baseline_;
};

}  // namespace tft::memory
