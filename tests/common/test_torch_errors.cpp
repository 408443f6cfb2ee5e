// LibTorch's errors as a host sees them (common/torch_errors.h): one line without C++ stack
// frames, the backtrace only on request, and every form of a failed allocation recognised with
// the bytes it asked for.
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

#include <c10/util/Exception.h>
#if __has_include(<oneapi/dnnl/dnnl_common.hpp>)
#include <oneapi/dnnl/dnnl_common.hpp>
#define TFT_HAS_ONEDNN_ERROR 1
#endif

#include "common/error.h"
#include "common/torch_errors.h"

#include "support/cmocka_cpp.h"

namespace {

// The c10::Error a TORCH_CHECK with `message` throws, with its backtrace.
c10::Error torch_check_error(const std::string& message) {
  try {
    TORCH_CHECK(false, message);
  } catch (const c10::Error& e) {
    return e;
  }
  throw std::logic_error("TORCH_CHECK(false) did not throw");
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TFT_TEST(test_message_without_stack_frames) {
  const c10::Error error = torch_check_error("boom: shapes differ");
  // What LibTorch itself gives: the message, then where it was raised and the frames.
  assert_true(has(error.what(), "Exception raised from"));
  ::unsetenv("TFT_TORCH_BACKTRACE");
  const std::string text = tft::error_text(error, "tft_trainer_train");
  assert_string_equal(text.c_str(), "boom: shapes differ");
  assert_false(has(text, "\n"));
  // On request, for debugging, the backtrace is kept.
  ::setenv("TFT_TORCH_BACKTRACE", "1", 1);
  assert_true(has(tft::torch_error_text(error), "Exception raised from"));
  ::setenv("TFT_TORCH_BACKTRACE", "0", 1);
  assert_false(has(tft::torch_error_text(error), "Exception raised from"));
  ::unsetenv("TFT_TORCH_BACKTRACE");
  // Not LibTorch's: the message as it is.
  assert_string_equal(tft::error_text(std::runtime_error("plain"), "x").c_str(), "plain");
}

TFT_TEST(test_every_allocation_failure_is_recognised) {
  // The CPU allocator's enforce (LibTorch 1.13, some 2.x builds): a plain c10::Error.
  const c10::Error cpu = torch_check_error(
      "DefaultCPUAllocator: can't allocate memory: you tried to allocate 33554496 bytes. Error "
      "code 12 (Cannot allocate memory)");
  const auto cpu_failure = tft::allocation_failure(cpu);
  assert_true(cpu_failure.has_value());
  assert_true(cpu_failure->bytes.has_value() && *cpu_failure->bytes == 33554496u);
  const std::string line = tft::out_of_memory_message("tft_trainer_train", *cpu_failure);
  assert_true(has(line,
                  "tft_trainer_train: out of memory: an allocation of 33554496 bytes "
                  "(32.0 MiB) failed"));
  assert_true(has(line, "training.batch_size") && has(line, "checkpoint.memory_budget"));
  assert_false(has(line, "\n"));
  assert_string_equal(tft::error_text(cpu, "tft_trainer_train").c_str(), line.c_str());

  // CUDA's caching allocator (and LibTorch 2.x's CPU allocator): c10::OutOfMemoryError, whose
  // message gives the size in its own words.
  try {
    TORCH_CHECK_WITH(OutOfMemoryError, false,
                     "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has 1.2 GiB free");
    fail_msg("no error");
  } catch (const c10::OutOfMemoryError& e) {
    const auto cuda = tft::allocation_failure(e);
    assert_true(cuda.has_value() && !cuda->bytes.has_value());
    assert_true(has(tft::out_of_memory_message("tft_trainer_create", *cuda),
                    "tft_trainer_create: out of memory: CUDA out of memory. Tried to allocate "
                    "20.00 MiB. GPU 0 has 1.2 GiB free"));
  }

  // operator new, and the library's own (it says what it was doing).
  const auto bad_alloc = tft::allocation_failure(std::bad_alloc());
  assert_true(bad_alloc.has_value() && !bad_alloc->bytes.has_value());
  assert_true(has(tft::out_of_memory_message("f", *bad_alloc),
                  "f: out of memory: an allocation "
                  "failed"));
  const auto own = tft::allocation_failure(tft::OutOfMemoryError("serialising 'x': no memory"));
  assert_true(own.has_value());
  assert_true(has(tft::out_of_memory_message("f", *own), "f: out of memory: serialising 'x'"));

#ifdef TFT_HAS_ONEDNN_ERROR
  // oneDNN (the CPU LSTM's kernels): its error, status dnnl_out_of_memory, in words that do not
  // say so; any other status is not out of memory.
  const auto onednn =
      tft::allocation_failure(dnnl::error(dnnl_out_of_memory, "could not create a primitive"));
  assert_true(onednn.has_value() && !onednn->bytes.has_value());
  assert_true(has(tft::out_of_memory_message("tft_trainer_train", *onednn),
                  "tft_trainer_train: out of memory: oneDNN: could not create a primitive"));
  assert_false(tft::allocation_failure(
                   dnnl::error(dnnl_unimplemented, "could not create a primitive descriptor"))
                   .has_value());
#endif

  // Anything else is not out of memory.
  assert_false(tft::allocation_failure(torch_check_error("shapes differ")).has_value());
  assert_false(tft::allocation_failure(std::runtime_error("out of range")).has_value());
  assert_false(tft::allocation_failure(tft::IoError("disk full")).has_value());
}

// Where it ran out (a training step): a failed allocation of any kind becomes the library's
// own OutOfMemoryError naming the step, which the C API's line then carries; the library's own
// error and anything that is not out of memory are left to the caller to rethrow.
TFT_TEST(test_out_of_memory_names_where_it_happened) {
  const c10::Error cpu = torch_check_error(
      "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1048576 bytes. Error "
      "code 12 (Cannot allocate memory)");
  const auto step = tft::out_of_memory_in(cpu, "training step 3 of 70 in epoch 2 (64 windows)");
  assert_true(step.has_value());
  assert_string_equal(step->what(),
                      "training step 3 of 70 in epoch 2 (64 windows): an allocation of 1048576 "
                      "bytes (1.0 MiB) failed");
  assert_true(has(tft::error_text(*step, "tft_trainer_train"),
                  "tft_trainer_train: out of memory: training step 3 of 70 in epoch 2 (64 "
                  "windows): an allocation of 1048576 bytes (1.0 MiB) failed. Lower"));
  const auto plain = tft::out_of_memory_in(std::bad_alloc(), "validation after epoch 4");
  assert_true(plain.has_value());
  assert_string_equal(plain->what(), "validation after epoch 4: an allocation failed");
  assert_false(tft::out_of_memory_in(*step, "again").has_value());
  assert_false(tft::out_of_memory_in(torch_check_error("shapes differ"), "x").has_value());
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_message_without_stack_frames),
      cmocka_unit_test(test_every_allocation_failure_is_recognised),
      cmocka_unit_test(test_out_of_memory_names_where_it_happened),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
