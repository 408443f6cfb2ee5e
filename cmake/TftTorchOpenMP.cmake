# tft_use_torch_openmp(target SOURCE...): the sources' at::parallel_for runs on LibTorch's
# OpenMP pool.
#
# ATen's parallel_for is a header template: its loop is split over threads only where the caller
# is compiled with OpenMP (ATen/Parallel-inl.h, INTRA_OP_PARALLEL comes from _OPENMP). Without
# -fopenmp every at::parallel_for of ours ran on the calling thread alone, whatever
# training.threads said. So the sources that call it compile with -fopenmp, and the target links
# the libgomp LibTorch itself loads (the wheel's torch/lib/libgomp.so.1, or the system one under
# Debian's libtorch): one soname, so the process keeps one OpenMP pool. Under another compiler
# than GCC (the clang fuzz build) the loops stay on one thread, as before.
#
# They compile without the shared precompiled header, which was built without OpenMP.
set(_tft_gomp_hints "")
foreach(_lib IN ITEMS "${_tft_torch_cpu_lib}")
  if(_lib)
    get_filename_component(_dir "${_lib}" DIRECTORY)
    list(APPEND _tft_gomp_hints "${_dir}")
  endif()
endforeach()
if(_tft_torch_root)
  list(APPEND _tft_gomp_hints "${_tft_torch_root}/lib")
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  find_library(TFT_TORCH_GOMP NAMES libgomp.so.1 HINTS ${_tft_gomp_hints} NO_DEFAULT_PATH)
  if(NOT TFT_TORCH_GOMP)
    # Debian's libtorch links the system libgomp, the one GCC links with -fopenmp.
    find_library(TFT_TORCH_GOMP NAMES libgomp.so.1 gomp
                 HINTS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
  endif()
  if(TFT_TORCH_GOMP)
    message(STATUS "OpenMP: our at::parallel_for on LibTorch's pool (${TFT_TORCH_GOMP})")
  endif()
endif()

function(tft_use_torch_openmp target)
  if(NOT TFT_TORCH_GOMP)
    return()
  endif()
  set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS -fopenmp)
  set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
  target_link_libraries(${target} PRIVATE ${TFT_TORCH_GOMP})
endfunction()
