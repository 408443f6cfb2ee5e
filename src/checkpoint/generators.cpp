#include "checkpoint/generators.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#ifdef TFT_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

#include <utility>

namespace tft::checkpoint {
namespace {

void set_seed(at::Generator& generator, std::uint64_t seed) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
}

}  // namespace

Generators::Generators(std::uint64_t seed)
    : seed_(seed), cpu_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

at::Generator Generators::generator(const c10::Device& device) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (device.is_cpu()) return cpu_;
  if (!device.is_cuda()) return at::globalContext().defaultGenerator(device);
#ifdef TFT_WITH_CUDA
  const c10::DeviceIndex index = device.has_index() ? device.index() : 0;
  auto it = cuda_.find(index);
  if (it == cuda_.end()) {
    at::Generator made = at::make_generator<at::CUDAGeneratorImpl>(index);
    set_seed(made, seed_);
    it = cuda_.emplace(index, std::move(made)).first;
  }
  return it->second;
#else
  // Unreachable in practice: a build without CUDA has no CUDA tensors to draw for.
  return at::globalContext().defaultGenerator(device);
#endif
}

void Generators::seed(std::uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  set_seed(cpu_, seed);
  for (auto& [index, generator] : cuda_) set_seed(generator, seed);
}

std::shared_ptr<Generators> current_generators() { return ThreadSlot<Generators>::current(); }

at::Generator generator_for(const c10::Device& device) {
  const auto& installed = ThreadSlot<Generators>::current();
  return installed ? installed->generator(device) : at::globalContext().defaultGenerator(device);
}

}  // namespace tft::checkpoint
