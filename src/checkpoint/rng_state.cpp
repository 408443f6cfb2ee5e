#include "checkpoint/rng_state.h"

#include "checkpoint/generators.h"

#include <mutex>

namespace tft {

namespace {

at::Tensor get_state(const at::Generator& generator) {
  std::lock_guard<std::mutex> lock(const_cast<at::Generator&>(generator).mutex());
  return generator.get_state();
}

void set_state(at::Generator generator, const at::Tensor& state) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

}  // namespace

RngState RngState::capture(const c10::Device& device) {
  RngState s;
  s.cpu = get_state(checkpoint::generator_for(c10::Device(c10::DeviceType::CPU)));
  if (device.is_cuda()) {
    s.cuda = get_state(checkpoint::generator_for(device));
    s.cuda_index = device.index();
  }
  return s;
}

void RngState::restore() const {
  if (cpu.defined()) {
    set_state(checkpoint::generator_for(c10::Device(c10::DeviceType::CPU)), cpu);
  }
  if (cuda.defined()) {
    set_state(checkpoint::generator_for(c10::Device(c10::DeviceType::CUDA, cuda_index)), cuda);
  }
}

}  // namespace tft
