// Error types of the C++ core. Every failure the library reports is one of these, so the
// C API can map each to a distinct status code (see capi/). Messages carry their context
// ("file:line: key 'x': ...") at the throw site; the type only says which category it is.
#pragma once

#include <stdexcept>
#include <string>

namespace tft {

// Base of every error the library throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A configuration value or file is wrong: a bad field, an unknown key, a rule broken.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// checkpoint.memory_budget fits no checkpoint plan at the configured batch size. The message
// says what would fit (train/budget_planning.h); the C API reports it as a ConfigError, and
// tft-train exits with 2, as for a bad command line.
class MemoryBudgetError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Input data is wrong: a missing column, a non-numeric value, an unsorted series.
class DataError : public Error {
 public:
  using Error::Error;
};

// Reading or writing a file failed.
class IoError : public Error {
 public:
  using Error::Error;
};

// A computation produced NaN or infinity.
class NumericalError : public Error {
 public:
  using Error::Error;
};

// An argument broke a function's contract (a null pointer, a size of 0, a dead handle).
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};

// The build or the platform lacks what was asked for (say, a CUDA device in a CPU build).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// A caller asked to stop (progress callback or cancel()).
class CancelledError : public Error {
 public:
  using Error::Error;
};

// An allocation failed where the library caught it itself and can say what it was doing (the
// C API's TFT_ERROR_OUT_OF_MEMORY, as std::bad_alloc and LibTorch's allocators' errors are).
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

}  // namespace tft
