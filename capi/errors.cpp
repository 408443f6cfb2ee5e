#include "api_guard.h"

#include <cstring>
#include <stdexcept>

#include <c10/util/Exception.h>

#include "common/torch_errors.h"

namespace tft::capi {
namespace {

thread_local std::string t_last_error;

}  // namespace

tft_status fail(tft_status status, const std::string& message) noexcept {
  try {
    t_last_error = message;
  } catch (...) {
    // Out of memory while recording the message: keep the status, lose the text.
  }
  return status;
}

tft_status status_from_current_exception(const char* function) noexcept {
  try {
    throw;
  } catch (const BufferTooSmall& e) {
    return fail(TFT_ERROR_BUFFER_TOO_SMALL, e.what());
  } catch (const InvalidArgumentError& e) {
    return fail(TFT_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const ConfigError& e) {
    return fail(TFT_ERROR_CONFIG, e.what());
  } catch (const DataError& e) {
    return fail(TFT_ERROR_DATA, e.what());
  } catch (const IoError& e) {
    return fail(TFT_ERROR_IO, e.what());
  } catch (const NumericalError& e) {
    return fail(TFT_ERROR_NUMERICAL, e.what());
  } catch (const CancelledError& e) {
    return fail(TFT_ERROR_CANCELLED, e.what());
  } catch (const UnsupportedError& e) {
    return fail(TFT_ERROR_UNSUPPORTED, e.what());
  } catch (const std::exception& e) {
    // Building these messages allocates, and under memory pressure that can fail too; nothing
    // may leave this noexcept function, so the status then stands with a short text.
    try {
      // std::bad_alloc, and LibTorch's allocators' errors (allocation_failure).
      if (const auto failure = allocation_failure(e)) {
        return fail(TFT_ERROR_OUT_OF_MEMORY, out_of_memory_message(function, *failure));
      }
      // Anything else, LibTorch's c10::Error included, is something the library did not expect.
      const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
      return fail(TFT_ERROR_INTERNAL,
                  std::string(function) + ": internal error: " +
                      (torch_error ? torch_error_text(*torch_error) : e.what()));
    } catch (...) {
      return fail(TFT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
  } catch (...) {
    return fail(TFT_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

tft_status copy_out(const std::string& text, char* buf, std::size_t len, std::size_t* needed,
                    const char* function) {
  const std::size_t size = text.size() + 1;
  if (buf == nullptr && len != 0) {
    throw InvalidArgumentError(std::string(function) + ": 'buf' is NULL but 'len' is " +
                               std::to_string(len));
  }
  if (needed != nullptr) *needed = size;
  if (buf == nullptr) return TFT_OK;  // a size query
  if (len >= size) {
    std::memcpy(buf, text.c_str(), size);
    return TFT_OK;
  }
  std::memcpy(buf, text.data(), len - 1);
  buf[len - 1] = '\0';
  return fail(TFT_ERROR_BUFFER_TOO_SMALL, std::string(function) + ": the buffer holds " +
                                              std::to_string(len) + " bytes, " +
                                              std::to_string(size) + " are needed");
}

}  // namespace tft::capi

extern "C" {

const char* tft_last_error(void) { return tft::capi::t_last_error.c_str(); }

const char* tft_status_name(tft_status status) {
  switch (status) {
    case TFT_OK: return "OK";
    case TFT_ERROR_INVALID_ARGUMENT: return "ERROR_INVALID_ARGUMENT";
    case TFT_ERROR_CONFIG: return "ERROR_CONFIG";
    case TFT_ERROR_DATA: return "ERROR_DATA";
    case TFT_ERROR_IO: return "ERROR_IO";
    case TFT_ERROR_NUMERICAL: return "ERROR_NUMERICAL";
    case TFT_ERROR_CANCELLED: return "ERROR_CANCELLED";
    case TFT_ERROR_UNSUPPORTED: return "ERROR_UNSUPPORTED";
    case TFT_ERROR_INTERNAL: return "ERROR_INTERNAL";
    case TFT_ERROR_BUFFER_TOO_SMALL: return "ERROR_BUFFER_TOO_SMALL";
    case TFT_ERROR_OUT_OF_MEMORY: return "ERROR_OUT_OF_MEMORY";
  }
  return "UNKNOWN";
}

const char* tft_version_string(void) { return TFTRAIN_VERSION_STRING; }

int tft_api_version(void) { return TFT_API_VERSION; }

void tft_version(int* major, int* minor, int* patch) {
  if (major != nullptr) *major = TFTRAIN_VERSION_MAJOR;
  if (minor != nullptr) *minor = TFTRAIN_VERSION_MINOR;
  if (patch != nullptr) *patch = TFTRAIN_VERSION_PATCH;
}

}  // extern "C"
