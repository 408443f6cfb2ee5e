# One precompiled header of LibTorch's headers (src/common/torch_pch.h), built once in the
# object library tft_torch_pch and reused by every target that compiles against LibTorch:
# tft_use_torch_pch(target). It turns a cold build of the tree from one LibTorch parse per
# translation unit into one per build.
#
# A target reusing it must compile with the same language standard and code-generation flags;
# GCC checks, and with -Winvalid-pch says so where it falls back to parsing the headers. Clang
# refuses outright a header compiled with another default visibility, so under clang a target
# with hidden visibility (libtftrain: set CXX_VISIBILITY_PRESET before calling) parses
# LibTorch's headers itself.
option(TFT_PRECOMPILED_HEADERS "Precompile LibTorch's headers once per build" ON)

if(TFT_PRECOMPILED_HEADERS)
  add_library(tft_torch_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/torch_pch.cpp)
  target_link_libraries(tft_torch_pch PRIVATE tft::torch tft_warnings)
  # By include path, not by absolute path: CMake writes the entry verbatim into the generated
  # wrapper (cmake_pch.hxx) that every reusing file includes, so the wrapper, and with it the
  # precompiled header ccache hashes, is the same in every checkout, and ccache's base_dir can
  # share objects between them. An absolute path made every checkout miss.
  target_include_directories(tft_torch_pch PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_precompile_headers(tft_torch_pch PRIVATE <common/torch_pch.h>)
endif()

function(tft_use_torch_pch target)
  if(NOT TFT_PRECOMPILED_HEADERS)
    return()
  endif()
  get_target_property(_visibility ${target} CXX_VISIBILITY_PRESET)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND _visibility AND NOT _visibility STREQUAL "default")
    return()
  endif()
  target_precompile_headers(${target} REUSE_FROM tft_torch_pch)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Winvalid-pch>)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "EXECUTABLE")
    # The header is compiled as position-independent code for the libraries (-fPIC); GCC
    # will not use it under an executable's -fPIE. PIC objects link into a PIE executable
    # just the same, so executables that share the header compile as PIC too.
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fPIC>)
  endif()
endfunction()
