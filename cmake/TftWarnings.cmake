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
