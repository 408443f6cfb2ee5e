#include "common/device_kernel_counter.h"

#include "common/device.h"
#include "common/torch_errors.h"
#include "common/torch_compat.h"

#include <exception>
#include <memory>
#include <set>
#include <stdexcept>

// Kineto's C++ entry points took their present form in LibTorch 2.0; CUDA builds use 2.x wheels,
// which ship libkineto's headers. Debian's 1.13 has neither, and no CUDA.
#if TFT_TORCH_AT_LEAST(2, 0) && __has_include(<kineto/ActivityType.h>)
#define TFT_HAS_KINETO_COUNTS 1
#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#else
#define TFT_HAS_KINETO_COUNTS 0
#endif

namespace tft {

#if TFT_HAS_KINETO_COUNTS
namespace {

namespace profiler = torch::profiler::impl;

profiler::ProfilerConfig device_activity_config() {
  return profiler::ProfilerConfig(profiler::ProfilerState::KINETO);
}

// The device's activity alone: the operators' host side is OperatorCounter's.
std::set<profiler::ActivityType> device_activities() { return {profiler::ActivityType::CUDA}; }

bool is(std::uint8_t activity, libkineto::ActivityType expected) {
  return activity == static_cast<std::uint8_t>(expected);
}

}  // namespace
#endif

void DeviceKernelCounter::start() {
  if (started_) throw std::logic_error("DeviceKernelCounter::start: started already");
  started_ = true;
  if (!device_.is_cuda()) {
    reason_ = "no kernels on " + device_.str() + ": only a CUDA device runs them";
    return;
  }
#if TFT_HAS_KINETO_COUNTS
  // One profiler a thread: LibTorch refuses a second, and preparing Kineto's trace again while
  // one runs would disturb the running one's.
  if (profiler::profilerEnabled()) {
    reason_ = "another profiler is already running on this thread";
    return;
  }
  try {
    // Work queued before the counter started is not this stretch's.
    synchronize(device_);
    torch::autograd::profiler::prepareProfiler(device_activity_config(), device_activities());
    torch::autograd::profiler::enableProfiler(device_activity_config(), device_activities());
    recording_ = true;
  } catch (const std::exception& e) {
    // A LibTorch built without Kineto, or CUPTI failing to start.
    reason_ = "LibTorch's profiler could not record the device: " +
              error_text(e, "starting the profiler");
  }
#else
  reason_ = "this LibTorch has no Kineto profiler to record the device with";
#endif
}

DeviceKernelCounter::~DeviceKernelCounter() {
#if TFT_HAS_KINETO_COUNTS
  if (recording_) {
    try {
      torch::autograd::profiler::disableProfiler();
    } catch (...) {  // a destructor stops quietly; finish() reports
    }
  }
#endif
}

std::optional<DeviceActivityCounts> DeviceKernelCounter::finish() {
  if (!recording_) {
    if (reason_.empty()) reason_ = started_ ? "finished already" : "not started";
    return std::nullopt;
  }
  recording_ = false;
#if TFT_HAS_KINETO_COUNTS
  try {
    synchronize(device_);  // CUPTI reports a kernel once it has run
  } catch (const std::exception& e) {
    // The profiler still stops below: it must not outlive the counter.
    reason_ = "the device failed before the count ended: " + error_text(e, "waiting for it");
  }
  std::unique_ptr<torch::autograd::profiler::ProfilerResult> result;
  try {
    result = torch::autograd::profiler::disableProfiler();
  } catch (const std::exception& e) {
    if (reason_.empty()) {
      reason_ = "LibTorch's profiler failed to stop: " + error_text(e, "stopping the profiler");
    }
    return std::nullopt;
  }
  if (!reason_.empty()) return std::nullopt;
  DeviceActivityCounts counts;
  for (const auto& event : result->events()) {
    if (event.deviceType() != c10::DeviceType::CUDA) continue;
    const std::uint8_t activity = event.activityType();
    if (is(activity, libkineto::ActivityType::CONCURRENT_KERNEL)) ++counts.kernels;
    if (is(activity, libkineto::ActivityType::GPU_MEMCPY)) ++counts.memcpys;
    if (is(activity, libkineto::ActivityType::GPU_MEMSET)) ++counts.memsets;
  }
  // Work on a CUDA device runs kernels: none recorded means the profiler saw nothing (CUPTI
  // missing or busy), not that nothing ran; a zero would read as a count.
  if (counts.kernels + counts.memcpys + counts.memsets == 0) {
    reason_ = "LibTorch's profiler recorded no device activity (is CUPTI available?)";
    return std::nullopt;
  }
  return counts;
#else
  return std::nullopt;
#endif
}

}  // namespace tft
