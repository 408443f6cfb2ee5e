// What keeps one trainer's work apart from another's running at the same time on another
// thread: its own random generators (checkpoint/generators.h), recompute clock
// (checkpoint/recompute.h) and CPU memory account (memory/tracking_allocator.h). Every Trainer
// entry point installs them on the calling thread for its duration (Isolation::Scope), so its
// dropout masks and initial weights, the recompute time the planner charges, and the
// activation peaks it reports are its own.
#pragma once

#include "checkpoint/generators.h"
#include "checkpoint/recompute.h"
#include "memory/tracking_allocator.h"

#include <cstdint>
#include <memory>

namespace tft {

struct Isolation {
  explicit Isolation(std::uint64_t seed)
      : generators(std::make_shared<checkpoint::Generators>(seed)),
        recompute_clock(std::make_shared<checkpoint::RecomputeClock>()),
        memory(std::make_shared<memory::CpuMemoryAccount>()) {}

  std::shared_ptr<checkpoint::Generators> generators;
  std::shared_ptr<checkpoint::RecomputeClock> recompute_clock;
  std::shared_ptr<memory::CpuMemoryAccount> memory;

  class Scope {
   public:
    explicit Scope(const Isolation& isolation)
        : generators_(isolation.generators),
          clock_(isolation.recompute_clock),
          memory_(isolation.memory) {}

   private:
    checkpoint::GeneratorsScope generators_;
    checkpoint::RecomputeClockScope clock_;
    memory::CpuMemoryAccountScope memory_;
  };
};

}  // namespace tft
