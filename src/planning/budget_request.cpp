#include "planning/budget_request.h"

#include "common/error.h"
#include "common/format.h"
#include "memory/device_memory.h"
#include "memory/host_memory.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tft {

namespace {

std::int64_t auto_margin(std::int64_t available) {
  return kAutoBudgetMarginBytes +
         static_cast<std::int64_t>(kAutoBudgetMarginFraction *
                                   static_cast<double>(std::max<std::int64_t>(available, 0)));
}

BudgetRequest auto_budget(std::int64_t available, std::int64_t optimizer_state_bytes,
                          const std::string& where, const std::string& already_held) {
  const std::int64_t margin = auto_margin(available);
  const std::int64_t bytes = available - optimizer_state_bytes - margin;
  const std::string terms = where + ", less " + format_bytes(optimizer_state_bytes) +
                            " of optimizer state and a " + format_bytes(margin) + " margin";
  if (bytes <= 0) {
    throw MemoryBudgetError(
        "checkpoint.memory_budget: auto leaves nothing for activations: " + terms + already_held);
  }
  return BudgetRequest{bytes, "auto = " + format_bytes(bytes) + " (" + terms + ")"};
}

BudgetRequest cpu_auto_budget(std::int64_t optimizer_state_bytes) {
  const memory::HostMemory host = memory::host_memory();
  const memory::HostMemoryLimit& tightest = host.tightest();
  std::vector<std::string> limits;
  for (const auto& limit : host.limits) {
    limits.push_back(limit.name + " " + format_bytes(limit.available_bytes) + ": " + limit.detail);
  }
  return auto_budget(tightest.available_bytes, optimizer_state_bytes,
                     format_bytes(tightest.available_bytes) + " available on cpu (" +
                         tightest.name + ", the tightest of " + join(limits, "; ") + ")",
                     "");
}

}  // namespace

BudgetRequest resolve_budget(const MemoryBudget& budget, const c10::Device& device,
                             std::int64_t optimizer_state_bytes) {
  if (!budget.automatic) return BudgetRequest{budget.bytes, format_bytes(budget.bytes)};
  if (device.is_cpu()) return cpu_auto_budget(optimizer_state_bytes);
  if (!device.is_cuda()) {
    throw ConfigError(
        "checkpoint.memory_budget: auto reads the free memory of the CPU or a "
        "CUDA device, and training runs on " +
        device.str() + ": give a size such as 900MiB");
  }
  const memory::DeviceMemory memory = memory::cuda_device_memory(device);
  const std::int64_t available = memory.available_bytes();
  return auto_budget(
      available, optimizer_state_bytes,
      format_bytes(available) + " available on " + device.str() + " (driver free " +
          format_bytes(memory.driver_free_bytes) + ", allocator cache " +
          format_bytes(memory.allocator_unused_bytes) + ")",
      " (weights and gradients already hold " + format_bytes(memory.allocated_bytes) + ")");
}

}  // namespace tft
