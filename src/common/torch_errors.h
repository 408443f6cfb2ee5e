// LibTorch's errors as a host should see them: one line, no C++ stack frames, and an
// allocation failure recognised as out of memory whatever raised it.
//
// c10::Error's what() carries the C++ backtrace of where it was thrown (27 frames for a failed
// CPU allocation); a host's log line or a binding's exception message wants the message alone.
// TFT_TORCH_BACKTRACE=1 in the environment keeps the backtrace, for debugging.
//
// Out of memory reaches the library in several forms: std::bad_alloc (operator new),
// tft::OutOfMemoryError (caught and explained by the library itself),
// c10::OutOfMemoryError (CUDA's caching allocator, LibTorch 2.x's CPU allocator), a plain
// c10::Error from the CPU allocator's enforce ("DefaultCPUAllocator: can't allocate memory",
// LibTorch 1.13 and some 2.x builds), and oneDNN's dnnl::error with status
// dnnl_out_of_memory (the CPU LSTM's kernels; recognised where LibTorch ships oneDNN's
// headers, as the PyPI wheel does).
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "common/error.h"

namespace c10 {
class Error;
}

namespace tft {

// `error`'s message without LibTorch's backtrace, unless TFT_TORCH_BACKTRACE=1 is set.
std::string torch_error_text(const c10::Error& error);

struct AllocationFailure {
  std::optional<std::uint64_t> bytes;  // the request, when the message says it
  std::string detail;                  // the allocator's own words, one line, or ""
};

// Whether `error` is a failed allocation, and what it asked for.
std::optional<AllocationFailure> allocation_failure(const std::exception& error);

// One line for a failed allocation during `doing` (e.g. "tft_trainer_train"): the bytes asked
// for and what to change in the config.
std::string out_of_memory_message(const std::string& doing, const AllocationFailure& failure);

// A failed allocation that is not yet an OutOfMemoryError, as one that says where it happened
// (`where`, e.g. "training step 17 of 70 in epoch 3 (64 windows)"), so the host's one line
// names the step; nothing for any other error (the caller rethrows it as it is).
std::optional<OutOfMemoryError> out_of_memory_in(const std::exception& error,
                                                 const std::string& where);

// What a host should read for `error` during `doing`: out_of_memory_message for a failed
// allocation, else the message (LibTorch's without its backtrace).
std::string error_text(const std::exception& error, const std::string& doing);

}  // namespace tft
