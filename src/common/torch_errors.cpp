#include "common/torch_errors.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <regex>
#include <typeinfo>

#include <c10/util/Exception.h>
// oneDNN's C++ error, in the LibTorch wheel's headers (not in Debian's LibTorch 1.13).
#if __has_include(<oneapi/dnnl/dnnl_common.hpp>)
#include <oneapi/dnnl/dnnl_common.hpp>
#define TFT_HAS_ONEDNN_ERROR 1
#endif

#include "common/error.h"
#include "common/format.h"

namespace tft {
namespace {

bool backtrace_wanted() {
  const char* value = std::getenv("TFT_TORCH_BACKTRACE");
  return value != nullptr && std::string(value) == "1";
}

// The first line of `text`, trimmed of a trailing period and spaces.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '.')) line.pop_back();
  return line;
}

// The allocators' phrases: LibTorch's CPU allocator ("can't allocate memory: you tried to
// allocate N bytes", "not enough memory: you tried to allocate N bytes") and CUDA's caching
// allocator ("CUDA out of memory. Tried to allocate 20.00 MiB").
bool says_out_of_memory(const std::string& message) {
  return message.find("DefaultCPUAllocator: can't allocate memory") != std::string::npos ||
         message.find("DefaultCPUAllocator: not enough memory") != std::string::npos ||
         message.find("out of memory") != std::string::npos;
}

// oneDNN, inside LibTorch's CPU kernels (the LSTM, some products), reports a failed allocation
// as a dnnl::error with status dnnl_out_of_memory and a message that does not say so ("could
// not create a primitive"). Found under an address-space limit: the LSTM's primitive was the
// first allocation that failed. Matched by type name, since oneDNN is linked into
// libtorch_cpu with hidden symbols, whose type_info a dynamic_cast here need not match.
bool is_onednn_out_of_memory(const std::exception& error) {
#ifdef TFT_HAS_ONEDNN_ERROR
  if (std::strcmp(typeid(error).name(), typeid(dnnl::error).name()) != 0) return false;
  return static_cast<const dnnl::error&>(error).status == dnnl_out_of_memory;
#else
  (void)error;
  return false;
#endif
}

std::optional<std::uint64_t> bytes_asked(const std::string& message) {
  static const std::regex kBytes("allocate ([0-9]+) bytes");
  std::smatch match;
  if (std::regex_search(message, match, kBytes)) return std::stoull(match[1].str());
  return std::nullopt;
}

}  // namespace

std::string torch_error_text(const c10::Error& error) {
  return backtrace_wanted() ? error.what() : error.what_without_backtrace();
}

std::optional<AllocationFailure> allocation_failure(const std::exception& error) {
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr) {
    return AllocationFailure{std::nullopt, ""};
  }
  if (dynamic_cast<const OutOfMemoryError*>(&error) != nullptr) {
    return AllocationFailure{std::nullopt, error.what()};
  }
  if (is_onednn_out_of_memory(error)) {
    return AllocationFailure{std::nullopt, std::string("oneDNN: ") + error.what()};
  }
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  if (torch_error == nullptr) return std::nullopt;
  const std::string message = torch_error->what_without_backtrace();
  if (dynamic_cast<const c10::OutOfMemoryError*>(&error) == nullptr &&
      !says_out_of_memory(message)) {
    return std::nullopt;
  }
  // The enforce's prefix ("[enforce fail at alloc_cpu.cpp:127] data. ") says where, not what.
  std::string detail = first_line(torch_error->msg());
  const std::size_t allocator = detail.find("DefaultCPUAllocator");
  if (allocator != std::string::npos) detail = detail.substr(allocator);
  return AllocationFailure{bytes_asked(message), detail};
}

namespace {

// "an allocation of N bytes (X MiB) failed", the allocator's own words, or "an allocation failed".
std::string what_failed(const AllocationFailure& failure) {
  if (failure.bytes) {
    return "an allocation of " + std::to_string(*failure.bytes) + " bytes (" +
           format_bytes(static_cast<std::int64_t>(*failure.bytes)) + ") failed";
  }
  return failure.detail.empty() ? "an allocation failed" : failure.detail;
}

}  // namespace

std::optional<OutOfMemoryError> out_of_memory_in(const std::exception& error,
                                                 const std::string& where) {
  if (dynamic_cast<const OutOfMemoryError*>(&error) != nullptr) return std::nullopt;
  const auto failure = allocation_failure(error);
  if (!failure) return std::nullopt;
  return OutOfMemoryError(where + ": " + what_failed(*failure));
}

std::string out_of_memory_message(const std::string& doing, const AllocationFailure& failure) {
  return doing + ": out of memory: " + what_failed(failure) +
         ". Lower training.batch_size or model.hidden_size, set a checkpoint.memory_budget the "
         "machine can hold, or train with training.precision: bf16-mixed";
}

std::string error_text(const std::exception& error, const std::string& doing) {
  if (const auto failure = allocation_failure(error)) return out_of_memory_message(doing, *failure);
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  return torch_error != nullptr ? torch_error_text(*torch_error) : error.what();
}

}  // namespace tft
