// Counts what a stretch of work ran on a CUDA device: its kernels, and its memory copies and
// sets, as LibTorch's Kineto profiler records them through CUPTI. Each kernel is a launch the
// host paid for, so on a host-bound step the launches, not the FLOPs, set the time (issue 40).
// OperatorCounter (operator_counter.h) counts the ATen calls that issue them; a call may launch
// none (a view), one, or several (a cuBLAS product with its split-K reduction, a fused LSTM).
// The peer is counted by the same rule (bench/peer/peer_bench.py --count-ops on a CUDA device),
// so the two figures compare.
//
// Only a CUDA device has kernels to count: on the CPU, in a build without CUDA or with a LibTorch
// whose profiler records no device activity (no Kineto, no CUPTI), finish() says why instead of
// returning a zero. Like OperatorCounter, count one untimed step: the profiler slows the work.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

namespace tft {

struct DeviceActivityCounts {
  std::int64_t kernels = 0;  // kernels run on the device
  std::int64_t memcpys = 0;  // memory copies to, from or on the device
  std::int64_t memsets = 0;  // memory sets on the device
};

class DeviceKernelCounter {
 public:
  // A counter for `device`; it records from start() on.
  explicit DeviceKernelCounter(const c10::Device& device) : device_(device) {}
  ~DeviceKernelCounter();  // stops recording if finish() was not called
  DeviceKernelCounter(const DeviceKernelCounter&) = delete;
  DeviceKernelCounter& operator=(const DeviceKernelCounter&) = delete;

  // Waits for work queued before it, then records the device's activity, when the device is a
  // CUDA device this build and LibTorch can profile; otherwise records nothing, and finish()
  // says why. Once only.
  void start();

  // Waits for the device, stops recording and returns what ran on it since start(); nullopt
  // when nothing could be recorded, or nothing ran (unavailable_reason() says which).
  std::optional<DeviceActivityCounts> finish();

  // Why finish() has no counts; "" otherwise.
  const std::string& unavailable_reason() const { return reason_; }

 private:
  c10::Device device_;
  bool started_ = false;
  bool recording_ = false;
  std::string reason_;
};

}  // namespace tft
