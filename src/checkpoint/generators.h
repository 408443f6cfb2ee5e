// Whose random numbers a computation draws: a trainer's own generators, or LibTorch's shared
// default ones.
//
// LibTorch's default generators are process-wide, so two trainers on two threads would draw
// from (and, through a checkpoint's recompute, rewind) each other's streams. A Generators
// object is one trainer's set instead: a CPU generator and one per CUDA device, all seeded
// alike. A thread installs it with a GeneratorsScope; dropout and weight initialisation ask
// generator_for(device), which answers with the installed set's generator, or LibTorch's
// default one where no set is installed (plain library use, tests). A checkpointed segment
// captures the installed set at forward and reinstalls it for its recompute, whichever thread
// runs backward.
#pragma once

#include "common/thread_slot.h"

#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace tft::checkpoint {

class Generators {
 public:
  // Every generator this set makes starts from `seed` (as torch::manual_seed seeds the
  // default ones).
  explicit Generators(std::uint64_t seed);

  // The set's generator for a CPU device, or for one CUDA device (made on first use).
  at::Generator generator(const c10::Device& device);

  // Reseeds every generator made so far, and those made later.
  void seed(std::uint64_t seed);

 private:
  std::mutex mutex_;
  std::uint64_t seed_;
  at::Generator cpu_;
  std::map<c10::DeviceIndex, at::Generator> cuda_;
};

// The set installed on this thread (null: LibTorch's defaults).
std::shared_ptr<Generators> current_generators();

// The generator computations on `device` draw from on this thread: the installed set's, or
// LibTorch's default generator for the device.
at::Generator generator_for(const c10::Device& device);

// Installs a set (null: none) on this thread for the scope's lifetime.
using GeneratorsScope = ThreadSlot<Generators>::Scope;

}  // namespace tft::checkpoint
