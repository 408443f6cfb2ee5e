// The bytes checkpoint.memory_budget stands for on the training device, and how they were
// arrived at (the summary states it): a size is itself; auto is
//
//   available - optimizer state to come - margin
//   available = on CUDA, the driver's free bytes + what the caching allocator holds but has
//               not handed out (memory/device_memory.h); on the CPU, the tightest of the
//               process's cgroup limit, its RLIMIT_AS and MemAvailable, each less what is in
//               use (memory/host_memory.h). Read when the weights, their gradients and the
//               planning batch are already allocated
//   optimizer state to come = Adam's two moments, 2 x the parameters' bytes (allocated at the
//               first step, after planning)
//   margin = 256 MiB + 10% of available: the caching allocator's rounding and fragmentation
//               (the measured peak counts allocated bytes, the device hands out whole
//               segments), and CUDA context and library workspaces outside the allocator.
//
// The margin is a stated estimate, not a measurement: only a run on a GPU shows how much of
// it the allocator's fragmentation takes.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>

#include "checkpoint/memory_budget.h"

namespace tft {

inline constexpr std::int64_t kAutoBudgetMarginBytes = std::int64_t{256} << 20;
inline constexpr double kAutoBudgetMarginFraction = 0.10;

struct BudgetRequest {
  std::int64_t bytes = 0;  // > 0
  std::string source;      // how it was set, for the summary: "900.0 MiB", "auto: ..."
};

// ConfigError for auto on a device other than the CPU or CUDA; MemoryBudgetError when auto
// leaves nothing (the device, or the host's limit, is full before training starts).
BudgetRequest resolve_budget(const MemoryBudget& budget, const c10::Device& device,
                             std::int64_t optimizer_state_bytes);

}  // namespace tft
