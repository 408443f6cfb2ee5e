/* TFT_UNDER_ASAN: the test is built with AddressSanitizer (GCC says so with a macro, clang with
 * a feature test). Its shadow memory reserves terabytes of address space and its quarantine
 * holds freed memory, so tests of address-space limits and of resident-set growth skip.
 * Plain C and C++. */
#ifndef TFT_TESTS_SUPPORT_SANITIZERS_H
#define TFT_TESTS_SUPPORT_SANITIZERS_H

#if defined(__SANITIZE_ADDRESS__)
#define TFT_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TFT_UNDER_ASAN 1
#endif
#endif

#endif
