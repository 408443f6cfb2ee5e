// The state of the random generators this thread draws from (checkpoint/generators.h: a
// trainer's own, else LibTorch's defaults; what dropout and weight initialisation draw from):
// captured for snapshots, and saved and restored around work that must not shift the
// training's random stream (the memory probe). Access is under each generator's mutex.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace tft {

struct RngState {
  at::Tensor cpu;   // uint8 state of the CPU generator
  at::Tensor cuda;  // the generator of the CUDA device trained on; undefined on CPU
  c10::DeviceIndex cuda_index = -1;

  // The current state; the CUDA generator of `device` too when it is a CUDA device.
  static RngState capture(const c10::Device& device);
  // Puts the captured state back (the CUDA part only when it was captured).
  void restore() const;
};

// Restores the generators' state when it goes out of scope.
class RngStateGuard {
 public:
  explicit RngStateGuard(const c10::Device& device) : saved_(RngState::capture(device)) {}
  ~RngStateGuard() { saved_.restore(); }
  RngStateGuard(const RngStateGuard&) = delete;
  RngStateGuard& operator=(const RngStateGuard&) = delete;

 private:
  RngState saved_;
};

}  // namespace tft
