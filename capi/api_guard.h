// The machinery every extern "C" entry point shares: the try/catch macro pair that turns any
// C++ exception into a tft_status plus a thread-local message, argument checks, handle
// liveness, and copying strings out to caller buffers.
#pragma once

#include "tftrain.h"

#include "common/error.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

namespace tft::capi {

// A caller array or buffer is too short (TFT_ERROR_BUFFER_TOO_SMALL).
class BufferTooSmall : public Error {
 public:
  using Error::Error;
};

// Maps the exception being handled to a status and records its message for tft_last_error;
// `function` (the entry point) names what was being done where the exception does not (out of
// memory, internal errors). Call only from inside a catch block.
tft_status status_from_current_exception(const char* function) noexcept;

// Records `message` as this thread's last error and returns `status`.
tft_status fail(tft_status status, const std::string& message) noexcept;

// Throws InvalidArgumentError naming the function and parameter when `pointer` is null.
inline void require(const void* pointer, const char* function, const char* parameter) {
  if (pointer == nullptr) {
    throw InvalidArgumentError(std::string(function) + ": '" + parameter + "' is NULL");
  }
}

// The live handles: each handle is registered (address and its type's magic number) when it
// is made and removed when freed, so a freed pointer, or one of another handle type, is
// recognised without reading its memory (clean under ASan and valgrind). A freed address that
// a new handle of the same type reuses looks live again: detection "where it can".
void register_handle(const void* handle, std::uint64_t magic);
// Removes the handle; false when it was not live as this type (nothing is removed).
bool unregister_handle(const void* handle, std::uint64_t magic) noexcept;
bool is_live_handle(const void* handle, std::uint64_t magic) noexcept;
// Runs `action` while holding the registry's lock if the handle is live, and says whether it
// was: a free of the same handle on another thread waits until `action` returns, so an entry
// point that may race a free (tft_trainer_cancel) never touches freed memory. `action` must
// be short and must not call into the registry.
bool with_live_handle(const void* handle, std::uint64_t magic, void (*action)(const void*));

[[noreturn]] inline void throw_dead_handle(const char* function, const char* parameter,
                                           const char* type_name) {
  throw InvalidArgumentError(std::string(function) + ": '" + parameter +
                             "' is a dead handle (already freed, or not a " + type_name + ")");
}

// Checks a handle argument: not NULL and live as its type (the struct's kMagic, kTypeName).
template <typename Handle>
Handle* live(Handle* handle, const char* function, const char* parameter) {
  using Type = std::remove_const_t<Handle>;
  require(handle, function, parameter);
  if (!is_live_handle(handle, Type::kMagic)) {
    throw_dead_handle(function, parameter, Type::kTypeName);
  }
  return handle;
}

// Registers a new handle and hands it out.
template <typename Handle>
Handle* publish(std::unique_ptr<Handle> handle) {
  register_handle(handle.get(), Handle::kMagic);
  return handle.release();
}

// Frees a live handle; NULL, a freed handle or another type's pointer is ignored.
template <typename Handle>
void destroy(Handle* handle) noexcept {
  if (handle != nullptr && unregister_handle(handle, Handle::kMagic)) delete handle;
}

// Checks a caller struct that "grows" (tftrain.h): not NULL, struct_size set.
template <typename Struct>
void require_struct(const Struct* out, const char* function, const char* parameter) {
  require(out, function, parameter);
  if (out->struct_size == 0) {
    throw InvalidArgumentError(std::string(function) + ": '" + parameter +
                               "->struct_size' is 0 (set it to sizeof the struct)");
  }
}

// Fills a caller struct that "grows" with the fields of `value` that fit in its struct_size
// (a host built against an older, shorter struct gets the fields it knows), keeping the
// caller's struct_size.
template <typename Struct>
void fill_struct(Struct* out, const Struct& value) {
  const std::size_t caller_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &value, std::min(caller_size, sizeof(Struct)));
  out->struct_size = caller_size;
}

// Copies `text` to a caller buffer by the header's (buf, len, needed) convention.
tft_status copy_out(const std::string& text, char* buf, std::size_t len, std::size_t* needed,
                    const char* function);

}  // namespace tft::capi

// Wraps the body of an entry point returning tft_status: exceptions become a status, and the
// messages that need it (out of memory, internal errors) name the entry point (__func__).
#define TFT_API_BEGIN try {
#define TFT_API_END TFT_API_END_AS(__func__)
// The same in a helper shared by entry points, which names its caller: `function`.
#define TFT_API_END_AS(function)                                 \
  }                                                              \
  catch (...) {                                                  \
    return ::tft::capi::status_from_current_exception(function); \
  }                                                              \
  return TFT_OK;
