# Finds LibTorch and exposes it as one imported target, tft::torch, whatever the layout:
#
#  1. A LibTorch with a TorchConfig.cmake (an official libtorch, or the `torch` wheel from PyPI:
#     pass -DTFT_TORCH_PREFIX=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
#     or put its share/cmake on CMAKE_PREFIX_PATH). A CPU build is used through find_package(Torch).
#     A CUDA build (every Linux wheel on PyPI) is linked directly instead: its TorchConfig demands
#     nvcc, cuDNN and a toolkit of the same version, which only compiling .cu files needs, and we
#     compile none; we call LibTorch's C++ API only.
#       - TFT_WITH_CUDA=OFF: the CPU half, libtorch_cpu + libc10 (libtorch_cpu still loads
#         libcudart/libcupti at run time, which the wheel's `cuda-toolkit[cudart,cupti]` pip
#         packages provide; see scripts/setup-deps.sh).
#       - TFT_WITH_CUDA=ON: also libtorch_cuda + libc10_cuda, and the CUDA runtime's headers,
#         which c10/cuda's headers include (TFT_CUDA_INCLUDE_DIR; found in a CUDA toolkit or in
#         the wheel's own nvidia-cuda-runtime package, so no toolkit is needed to compile).
#  2. Debian's libtorch-dev (no TorchConfig.cmake): headers in /usr/include and
#     /usr/include/torch/csrc/api/include, libraries torch, torch_cpu, c10.
#
# TFT_TORCH_VERSION is set to "MAJOR.MINOR" in every case.

# A build folder configured for one LibTorch and then pointed at another must not keep the
# libraries found for the first.
if(DEFINED _TFT_TORCH_PREFIX_CONFIGURED AND NOT _TFT_TORCH_PREFIX_CONFIGURED STREQUAL TFT_TORCH_PREFIX)
  message(STATUS "LibTorch: TFT_TORCH_PREFIX changed; looking for LibTorch again")
  unset(_tft_torch_cpu_lib CACHE)
  unset(_tft_c10_lib CACHE)
  unset(_tft_torch_lib CACHE)
  unset(_tft_torch_api_include CACHE)
  unset(_tft_torch_cuda_lib CACHE)
  unset(_tft_c10_cuda_lib CACHE)
  unset(TFT_CUDA_INCLUDE_DIR CACHE)
  unset(TFT_CUDART_LIBRARY CACHE)
  unset(Torch_DIR CACHE)
endif()
set(_TFT_TORCH_PREFIX_CONFIGURED "${TFT_TORCH_PREFIX}" CACHE INTERNAL "")

set(_tft_torch_config "")
set(_tft_torch_search ${TFT_TORCH_PREFIX} ${CMAKE_PREFIX_PATH})
if(DEFINED Torch_DIR AND EXISTS "${Torch_DIR}/TorchConfig.cmake")
  set(_tft_torch_config "${Torch_DIR}/TorchConfig.cmake")
else()
  foreach(_p IN LISTS _tft_torch_search)
    foreach(_sub "share/cmake/Torch" "Torch" "")
      if(NOT _tft_torch_config AND EXISTS "${_p}/${_sub}/TorchConfig.cmake")
        get_filename_component(_tft_torch_config "${_p}/${_sub}/TorchConfig.cmake" ABSOLUTE)
      endif()
    endforeach()
  endforeach()
endif()

add_library(tft_torch INTERFACE)
add_library(tft::torch ALIAS tft_torch)

if(_tft_torch_config)
  get_filename_component(_tft_torch_cmake_dir "${_tft_torch_config}" DIRECTORY)
  # <root>/share/cmake/Torch -> <root>
  get_filename_component(_tft_torch_root "${_tft_torch_cmake_dir}/../../.." ABSOLUTE)
  set(_tft_torch_is_cuda OFF)
  if(EXISTS "${_tft_torch_cmake_dir}/../Caffe2/Caffe2Config.cmake")
    file(STRINGS "${_tft_torch_cmake_dir}/../Caffe2/Caffe2Config.cmake" _cuda_line
         REGEX "set\\(CAFFE2_USE_CUDA (ON|1)\\)")
    if(_cuda_line)
      set(_tft_torch_is_cuda ON)
    endif()
  endif()

  if(TFT_WITH_CUDA AND NOT _tft_torch_is_cuda)
    message(FATAL_ERROR "TFT_WITH_CUDA=ON needs a CUDA build of LibTorch; the one at "
                        "${_tft_torch_root} is CPU-only")
  endif()

  if(_tft_torch_is_cuda)
    find_library(_tft_torch_cpu_lib torch_cpu PATHS "${_tft_torch_root}/lib" NO_DEFAULT_PATH REQUIRED)
    find_library(_tft_c10_lib c10 PATHS "${_tft_torch_root}/lib" NO_DEFAULT_PATH REQUIRED)
    target_include_directories(tft_torch SYSTEM INTERFACE
      "${_tft_torch_root}/include" "${_tft_torch_root}/include/torch/csrc/api/include")
    target_link_libraries(tft_torch INTERFACE ${_tft_torch_cpu_lib} ${_tft_c10_lib})
    if(TFT_WITH_CUDA)
      find_library(_tft_torch_cuda_lib torch_cuda PATHS "${_tft_torch_root}/lib" NO_DEFAULT_PATH REQUIRED)
      find_library(_tft_c10_cuda_lib c10_cuda PATHS "${_tft_torch_root}/lib" NO_DEFAULT_PATH REQUIRED)
      # The wheel's own CUDA runtime headers first (nvidia/cu13/include from 13.x on,
      # nvidia/cuda_runtime/include before): they match the CUDA it was built with.
      file(GLOB _tft_wheel_cuda_includes
           "${_tft_torch_root}/../nvidia/cu*/include" "${_tft_torch_root}/../nvidia/cuda_runtime/include")
      # crt/host_config.h, which cuda_runtime.h includes, comes in its own pip package
      # (nvidia-cuda-crt): a folder counts only with both.
      find_path(TFT_CUDA_INCLUDE_DIR NAMES crt/host_config.h
                HINTS ${_tft_wheel_cuda_includes} ${CUDAToolkit_ROOT}/include
                      $ENV{CUDA_HOME}/include $ENV{CUDA_PATH}/include /usr/local/cuda/include
                DOC "Folder with the CUDA runtime's headers (cuda_runtime_api.h, crt/)")
      if(NOT TFT_CUDA_INCLUDE_DIR OR NOT EXISTS "${TFT_CUDA_INCLUDE_DIR}/cuda_runtime_api.h")
        message(FATAL_ERROR "TFT_WITH_CUDA=ON: no folder with cuda_runtime_api.h and "
                            "crt/host_config.h. Install the CUDA runtime headers (pip's "
                            "cuda-toolkit[cudart,crt], which setup-deps.sh puts beside the torch "
                            "wheel, or a CUDA toolkit) or pass -DTFT_CUDA_INCLUDE_DIR=<folder>.")
      endif()
      # c10/cuda's inline functions call the CUDA runtime: link the one beside the headers.
      get_filename_component(_tft_cuda_root "${TFT_CUDA_INCLUDE_DIR}" DIRECTORY)
      find_library(TFT_CUDART_LIBRARY NAMES cudart libcudart.so.13 libcudart.so.12
                   HINTS "${_tft_cuda_root}/lib" "${_tft_cuda_root}/lib64"
                         "${_tft_cuda_root}/targets/x86_64-linux/lib"
                   DOC "The CUDA runtime library (libcudart)")
      if(NOT TFT_CUDART_LIBRARY)
        message(FATAL_ERROR "TFT_WITH_CUDA=ON: libcudart not found beside ${TFT_CUDA_INCLUDE_DIR}; "
                            "pass -DTFT_CUDART_LIBRARY=<path>.")
      endif()
      message(STATUS "LibTorch: CUDA build at ${_tft_torch_root}; CUDA runtime ${TFT_CUDART_LIBRARY}")
      target_include_directories(tft_torch SYSTEM INTERFACE "${TFT_CUDA_INCLUDE_DIR}")
      # Nothing of ours calls into libtorch_cuda by name, yet loading it is what registers the
      # CUDA kernels and hooks: keep it linked where the toolchain defaults to --as-needed.
      target_link_libraries(tft_torch INTERFACE
        "-Wl,--no-as-needed,${_tft_torch_cuda_lib},--as-needed" ${_tft_c10_cuda_lib}
        ${TFT_CUDART_LIBRARY})
    else()
      message(STATUS "LibTorch: CUDA build at ${_tft_torch_root}; linking its CPU libraries only")
    endif()
    # The wheel says which std::string ABI it was built with in TorchConfig.cmake.
    file(STRINGS "${_tft_torch_config}" _abi_line REGEX "_GLIBCXX_USE_CXX11_ABI=[01]")
    if(_abi_line MATCHES "_GLIBCXX_USE_CXX11_ABI=([01])")
      target_compile_definitions(tft_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${CMAKE_MATCH_1})
    endif()
    set(_tft_torch_version_header "${_tft_torch_root}/include/torch/csrc/api/include/torch/version.h")
  else()
    find_package(Torch CONFIG REQUIRED HINTS "${_tft_torch_cmake_dir}")
    message(STATUS "LibTorch: find_package(Torch) at ${_tft_torch_root}")
    target_link_libraries(tft_torch INTERFACE ${TORCH_LIBRARIES})
    # Re-declare the include directories as SYSTEM so -Wall -Wextra stays on our code only.
    target_include_directories(tft_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
    separate_arguments(_tft_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
    target_compile_options(tft_torch INTERFACE ${_tft_torch_flags})
    set(_tft_torch_version_header "${_tft_torch_root}/include/torch/csrc/api/include/torch/version.h")
  endif()
else()
  if(TFT_WITH_CUDA)
    message(FATAL_ERROR "TFT_WITH_CUDA=ON needs a CUDA build of LibTorch with its CMake config "
                        "(the PyPI wheel: scripts/setup-deps.sh); Debian's libtorch-dev is CPU-only")
  endif()
  find_path(_tft_torch_api_include torch/version.h
            PATHS /usr/include/torch/csrc/api/include NO_DEFAULT_PATH)
  find_library(_tft_torch_lib torch)
  find_library(_tft_torch_cpu_lib torch_cpu)
  find_library(_tft_c10_lib c10)
  if(NOT _tft_torch_api_include OR NOT _tft_torch_cpu_lib OR NOT _tft_c10_lib)
    message(FATAL_ERROR
      "LibTorch not found. Run scripts/setup-deps.sh (it installs the PyPI wheel and prints "
      "the prefix to pass as -DTFT_TORCH_PREFIX=), or install Debian's libtorch-dev "
      "(setup-deps.sh --debian), or pass -DTFT_TORCH_PREFIX=<libtorch root or the torch "
      "package folder of a wheel>.")
  endif()
  message(STATUS "LibTorch: Debian layout (${_tft_torch_cpu_lib})")
  target_include_directories(tft_torch SYSTEM INTERFACE /usr/include ${_tft_torch_api_include})
  target_link_libraries(tft_torch INTERFACE ${_tft_torch_lib} ${_tft_torch_cpu_lib} ${_tft_c10_lib})
  set(_tft_torch_version_header "${_tft_torch_api_include}/torch/version.h")
endif()

# LibTorch 2.10 on keeps the numbers in torch/headeronly/version.h, which torch/version.h
# includes.
get_filename_component(_tft_torch_include_dir "${_tft_torch_version_header}/../../../../../.." ABSOLUTE)
# The folder with ATen/, c10/ and torch/csrc/ (src/distributed looks for c10d's headers there).
set(TFT_TORCH_INCLUDE_DIR "${_tft_torch_include_dir}")
if(EXISTS "${_tft_torch_version_header}")
  file(STRINGS "${_tft_torch_version_header}" _defines REGEX "define TORCH_VERSION_MAJOR")
  if(NOT _defines AND EXISTS "${_tft_torch_include_dir}/torch/headeronly/version.h")
    set(_tft_torch_version_header "${_tft_torch_include_dir}/torch/headeronly/version.h")
  endif()
endif()
if(EXISTS "${_tft_torch_version_header}")
  file(STRINGS "${_tft_torch_version_header}" _major REGEX "define TORCH_VERSION_MAJOR")
  file(STRINGS "${_tft_torch_version_header}" _minor REGEX "define TORCH_VERSION_MINOR")
  string(REGEX MATCH "[0-9]+" _major "${_major}")
  string(REGEX MATCH "[0-9]+" _minor "${_minor}")
  set(TFT_TORCH_VERSION "${_major}.${_minor}")
  message(STATUS "LibTorch version ${TFT_TORCH_VERSION}")
endif()

# Our code is C++17, but recent LibTorch headers (2.10 on) refuse anything older than C++20;
# code that includes them is then compiled as C++20.
foreach(_dir "${_tft_torch_root}/include" "/usr/include")
  if(NOT _tft_torch_needs_cxx20 AND EXISTS "${_dir}/ATen/ATen.h")
    file(STRINGS "${_dir}/ATen/ATen.h" _cxx20 REGEX "C\\+\\+20 or later")
    if(_cxx20)
      set(_tft_torch_needs_cxx20 ON)
    endif()
  endif()
  if(_tft_torch_config)
    break()  # a config layout: only its own include folder counts
  endif()
endforeach()
if(_tft_torch_needs_cxx20)
  message(STATUS "LibTorch headers need C++20: torch-dependent targets compile as C++20")
  target_compile_features(tft_torch INTERFACE cxx_std_20)
endif()

if(TFT_WITH_CUDA)
  # On the LibTorch target, so every translation unit that sees LibTorch (and the shared
  # precompiled header) agrees on it.
  target_compile_definitions(tft_torch INTERFACE TFT_WITH_CUDA=1)
endif()

find_package(Threads REQUIRED)
target_link_libraries(tft_torch INTERFACE Threads::Threads)
