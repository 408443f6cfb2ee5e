# The Python wheel (bindings/python/pyproject.toml: scikit-build-core configures this project
# with -DTFT_PYTHON_WHEEL=ON and builds the `tftrain` target only). Included before TftTorch.
#
# Compiled against the pinned torch and pyarrow wheels (the versions the wheel's metadata pins);
# at run time the library finds the installing environment's torch and pyarrow packages beside
# its own in site-packages, through its RUNPATH ($ORIGIN/../torch/lib, $ORIGIN/../pyarrow), as
# PyTorch's own C++ extensions find LibTorch. Which Python provides them at build time, first
# found:
#   1. the building Python (scikit-build-core's Python_EXECUTABLE) when it has torch: an
#      sdist installed with `pip install --no-build-isolation` into an environment that has the
#      pinned torch and pyarrow (scripts/make-sdist.sh);
#   2. the set-up venv of scripts/setup-deps.sh ($TFT_TORCH_VENV, else
#      ~/.cache/tftrain/venv-torch): `pip install ./bindings/python` in this repository, whose
#      isolated build environment has neither package.
#
#   TFT_TORCH_PREFIX   the torch package folder; default: asked of that Python

# find_spec locates the package without importing it (importing torch takes seconds).
set(_tft_wheel_find_torch
    "import importlib.util as u; print(u.find_spec('torch').submodule_search_locations[0])")
if(DEFINED ENV{TFT_TORCH_VENV})
  set(_tft_wheel_setup_python "$ENV{TFT_TORCH_VENV}/bin/python")
else()
  set(_tft_wheel_setup_python "$ENV{HOME}/.cache/tftrain/venv-torch/bin/python")
endif()
set(_tft_wheel_python "")
foreach(_tft_candidate IN ITEMS "${Python_EXECUTABLE}" "${_tft_wheel_setup_python}")
  if(_tft_candidate AND EXISTS "${_tft_candidate}")
    execute_process(COMMAND "${_tft_candidate}" -c "${_tft_wheel_find_torch}"
                    OUTPUT_VARIABLE _tft_wheel_torch RESULT_VARIABLE _tft_wheel_rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_tft_wheel_rc EQUAL 0)
      set(_tft_wheel_python "${_tft_candidate}")
      break()
    endif()
  endif()
endforeach()
if(NOT _tft_wheel_python AND NOT TFT_TORCH_PREFIX)
  message(FATAL_ERROR "The Python wheel is compiled against the pinned torch and pyarrow wheels, "
                      "and neither the building Python (${Python_EXECUTABLE}) nor the set-up venv "
                      "(${_tft_wheel_setup_python}) has torch. In this repository, run "
                      "scripts/setup-deps.sh first; from the sdist, install torch and pyarrow at "
                      "the versions its metadata pins, then `pip install --no-build-isolation`. "
                      "Or set TFT_TORCH_PREFIX to the torch package folder.")
endif()
if(_tft_wheel_python)
  message(STATUS "tftrain wheel: torch and pyarrow of ${_tft_wheel_python}")
  if(NOT TFT_TORCH_PREFIX)
    set(TFT_TORCH_PREFIX "${_tft_wheel_torch}" CACHE PATH "LibTorch root" FORCE)
  endif()
  set(TFT_ARROW_PYTHON "${_tft_wheel_python}" CACHE FILEPATH
      "The Python whose pyarrow provides Arrow C++ and Parquet")
endif()

# pip builds in a folder of its own (build-python/, at build/'s depth): with paths rewritten
# relative to the root and the folder not hashed, ccache serves it build/'s objects, and another
# checkout's (the precompiled header is included by include path, __FILE__ is relative: the
# root CMakeLists.txt). A CCACHE_BASEDIR of the caller's wins.
if(CCACHE_PROGRAM AND NOT DEFINED ENV{CCACHE_BASEDIR})
  list(APPEND _tft_ccache_env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1)
  set(_tft_ccache ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${_tft_ccache_env} ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${_tft_ccache})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_tft_ccache})
endif()

# Installs libtftrain as <site-packages>/tftrain/libtftrain.so.0: one file (a wheel keeps no
# symbolic links), its SONAME's name, with a RUNPATH relative to itself only.
function(tft_install_python_wheel target)
  set_target_properties(${target} PROPERTIES
    BUILD_WITH_INSTALL_RPATH ON
    INSTALL_RPATH_USE_LINK_PATH OFF
    INSTALL_RPATH "\$ORIGIN/../torch/lib;\$ORIGIN/../pyarrow")
  install(FILES $<TARGET_FILE:${target}> DESTINATION tftrain
          RENAME libtftrain.so.${PROJECT_VERSION_MAJOR} COMPONENT python)
endfunction()
