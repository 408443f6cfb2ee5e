#include "common/device.h"

#include "common/error.h"

#include <c10/util/Exception.h>

#include <optional>

#ifdef TFT_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace tft {

int cuda_device_count() {
#ifdef TFT_WITH_CUDA
  // Unlike torch::cuda::device_count(), this never throws: no driver means no device.
  return static_cast<int>(c10::cuda::device_count());
#else
  return 0;
#endif
}

c10::Device resolve_device(const std::string& text, const std::string& field) {
  std::optional<c10::Device> device;
  try {
    device = c10::Device(text);
  } catch (const c10::Error&) {
    throw ConfigError(field + ": '" + text + "' is not a device (cpu, cuda, cuda:N)");
  }
  if (device->is_cpu()) return *device;
  if (!device->is_cuda()) {
    throw UnsupportedError(field + ": '" + text + "': only cpu and cuda are supported");
  }
#ifndef TFT_WITH_CUDA
  throw UnsupportedError(field + ": '" + text +
                         "': this build has no CUDA support (rebuild with -DTFT_WITH_CUDA=ON)");
#else
  const int count = cuda_device_count();
  if (count == 0) throw UnsupportedError(field + ": '" + text + "': no CUDA device is available");
  if (device->has_index() && device->index() >= count) {
    throw UnsupportedError(field + ": '" + text + "': this machine has " + std::to_string(count) +
                           " CUDA device" + (count == 1 ? "" : "s"));
  }
  return *device;
#endif
}

void synchronize(const c10::Device& device) {
#ifdef TFT_WITH_CUDA
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(device);
    c10::cuda::device_synchronize();
  }
#else
  (void)device;
#endif
}

}  // namespace tft
