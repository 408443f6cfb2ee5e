// cmocka from C++: the includes it needs, and a guard that turns an escaping C++ exception
// into a test failure with its message instead of terminating the whole suite.
//
// Include this header LAST: cmocka defines a macro named fail(), which would rewrite
// std::basic_ios::fail() in any standard or LibTorch header included after it. The stream
// headers are pulled in first for the same reason.
#pragma once

#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
extern "C" {  // cmocka 1.1 has no extern "C" guard of its own
#include <cmocka.h>
}
// clang-format on

#define TFT_TEST(name)                                           \
  static void name##_body();                                     \
  static void name(void** /*state*/) {                           \
    try {                                                        \
      name##_body();                                             \
    } catch (const std::exception& e) {                          \
      fail_msg("%s: unexpected exception: %s", #name, e.what()); \
    }                                                            \
  }                                                              \
  static void name##_body()

// Asserts that `expr` throws an exception of type `type` whose what() contains `needle`.
#define TFT_ASSERT_THROWS_WITH(expr, type, needle)                                            \
  do {                                                                                        \
    bool tft_thrown_ = false;                                                                 \
    try {                                                                                     \
      (void)(expr);                                                                           \
    } catch (const type& e) {                                                                 \
      tft_thrown_ = true;                                                                     \
      if (std::string(e.what()).find(needle) == std::string::npos) {                          \
        fail_msg("%s:%d: message \"%s\" lacks \"%s\"", __FILE__, __LINE__, e.what(), needle); \
      }                                                                                       \
    }                                                                                         \
    if (!tft_thrown_) fail_msg("%s:%d: %s did not throw", __FILE__, __LINE__, #expr);         \
  } while (0)
