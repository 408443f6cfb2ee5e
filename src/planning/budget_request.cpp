#include "planning/budget_request.h"

#include "common/error.h"
#include "common/format.h"
#include "memory/device_memory.h"

namespace tft {

BudgetRequest resolve_budget(const MemoryBudget& budget, const c10::Device& device,
                             std::int64_t optimizer_state_bytes) {
  if (!budget.automatic) return BudgetRequest{budget.bytes, format_bytes(budget.bytes)};
  if (!device.is_cuda()) {
    throw ConfigError(
        "checkpoint.memory_budget: auto reads a CUDA device's free memory, and training runs on " +
        device.str() + ": give a size such as 900MiB");
  }
  const memory::DeviceMemory memory = memory::cuda_device_memory(device);
  const std::int64_t available = memory.available_bytes();
  const auto margin =
      kAutoBudgetMarginBytes +
      static_cast<std::int64_t>(kAutoBudgetMarginFraction * static_cast<double>(available));
  const std::int64_t bytes = available - optimizer_state_bytes - margin;
  const std::string terms = format_bytes(available) + " available on " + device.str() +
                            " (driver free " + format_bytes(memory.driver_free_bytes) +
                            ", allocator cache " + format_bytes(memory.allocator_unused_bytes) +
                            "), less " + format_bytes(optimizer_state_bytes) +
                            " of optimizer state and a " + format_bytes(margin) + " margin";
  if (bytes <= 0) {
    throw MemoryBudgetError(
        "checkpoint.memory_budget: auto leaves nothing for activations: " + terms +
        " (weights and gradients already hold " + format_bytes(memory.allocated_bytes) + ")");
  }
  return BudgetRequest{bytes, "auto = " + format_bytes(bytes) + " (" + terms + ")"};
}

}  // namespace tft
