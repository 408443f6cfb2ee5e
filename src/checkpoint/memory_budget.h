// checkpoint.memory_budget: the activation memory one training step may use, as the budget
// planner's input (train/budget_planning.h). Not a checkpoint strategy: the planner picks the
// units, chunks and boundary dtype whose measured peak fits it.
//
// Written as a size with a binary unit ("3.5GiB", "900MiB", "512KiB", "1TiB", "4096B"), a
// whole number of bytes (4096), or "auto": what the device has free once the weights,
// gradients and optimizer state are there, less a safety margin (planning/budget_request.h):
// on CUDA the device's free memory, on the CPU the tightest of the host's limits on this
// process (memory/host_memory.h).
// Only binary units: "3.5GB" would be ambiguous (10^9 or 2^30 bytes), so it is an error.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace tft {

struct MemoryBudget {
  bool automatic = false;  // "auto"
  std::int64_t bytes = 0;  // the budget when not automatic; must be > 0

  static MemoryBudget of_bytes(std::int64_t bytes) { return MemoryBudget{false, bytes}; }
  static MemoryBudget automatic_budget() { return MemoryBudget{true, 0}; }
};

bool operator==(const MemoryBudget& a, const MemoryBudget& b);
bool operator!=(const MemoryBudget& a, const MemoryBudget& b);

// Reads "3.5GiB", "3.5 GiB", "900MiB", "4096B", "4096" or "auto". A fraction is allowed with a
// unit above B and rounds down to whole bytes. Returns the budget, or why the text is not one
// (a sentence without the key's name: "unknown unit 'GB' in \"3.5GB\" (...)").
std::variant<MemoryBudget, std::string> parse_memory_budget(const std::string& text);

// The accepted forms, for messages: "a size such as 3.5GiB or 900MiB (binary units B, KiB,
// MiB, GiB, TiB), a whole number of bytes, or auto".
const char* memory_budget_forms();

// The text that reads back to the same budget: "auto", "3584MiB" (the largest binary unit
// that divides it exactly) or the bytes ("1000000000").
std::string memory_budget_text(const MemoryBudget& budget);

// How summaries show it: "auto" or "3.50 GiB" (format_bytes).
std::string memory_budget_shown(const MemoryBudget& budget);

}  // namespace tft
