// The machinery every extern "C" entry point shares: the try/catch macro pair that turns any
// C++ exception into a tft_status plus a thread-local message, argument checks, handle
// liveness, and copying strings out to caller buffers.
#pragma once

#include "tftrain.h"

#include "common/error.h"

#include <cstdint>
#include <string>

namespace tft::capi {

// Maps the exception being handled to a status and records its message for tft_last_error.
// Call only from inside a catch block.
tft_status status_from_current_exception() noexcept;

// Records `message` as this thread's last error and returns `status`.
tft_status fail(tft_status status, const std::string& message) noexcept;

// Throws InvalidArgumentError naming the function and parameter when `pointer` is null.
inline void require(const void* pointer, const char* function, const char* parameter) {
  if (pointer == nullptr) {
    throw InvalidArgumentError(std::string(function) + ": '" + parameter + "' is NULL");
  }
}

// Every handle struct starts with a Liveness: a magic number set while it is alive and wiped
// by free, so a freed handle passed again is caught whenever its memory was not reused yet.
struct Liveness {
  explicit Liveness(std::uint64_t magic) : value(magic) {}
  std::uint64_t value;
};

template <typename Handle>
Handle* live(Handle* handle, const char* function, const char* parameter) {
  require(handle, function, parameter);
  if (handle->liveness.value != Handle::kMagic) {
    throw InvalidArgumentError(std::string(function) + ": '" + parameter +
                               "' is a dead handle (already freed, or not a " +
                               Handle::kTypeName + ")");
  }
  return handle;
}

template <typename Handle>
void destroy(Handle* handle) noexcept {
  if (handle == nullptr || handle->liveness.value != Handle::kMagic) return;
  handle->liveness.value = 0;
  delete handle;
}

// Copies `text` to a caller buffer by the header's (buf, len, needed) convention.
tft_status copy_out(const std::string& text, char* buf, std::size_t len, std::size_t* needed,
                    const char* function);

}  // namespace tft::capi

// Wraps the body of an entry point returning tft_status: exceptions become a status.
#define TFT_API_BEGIN try {
#define TFT_API_END                                      \
  }                                                      \
  catch (...) {                                          \
    return ::tft::capi::status_from_current_exception(); \
  }                                                      \
  return TFT_OK;
