# Warnings and sanitizers for our own targets only. LibTorch's headers come in as SYSTEM
# includes (see TftTorch.cmake), so -Wall -Wextra stays quiet about code we do not own.
add_library(tft_warnings INTERFACE)
target_compile_options(tft_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra>
  $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra -Wpedantic>)

if(TFT_SANITIZE)
  # Applied globally so every test binary and library shares one runtime.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(TFT_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TFT_BUILD_FUZZERS=ON needs clang, whose libFuzzer it links: "
                        "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "
                        "(scripts/fuzz.sh configures build-fuzz so)")
  endif()
  # Global, like TFT_SANITIZE: the library code the fuzzers reach must carry libFuzzer's
  # coverage instrumentation (fuzzer-no-link: no libFuzzer main) and the sanitizers. Only the
  # fuzz executables link libFuzzer itself (tests/fuzz/CMakeLists.txt). UBSan aborts at the
  # first report, so a finding is a crash libFuzzer saves, not a line in a log.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
