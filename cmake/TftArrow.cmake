# Apache Arrow C++ and Parquet for reading Parquet files (src/readers/parquet_source.cpp), from the
# pyarrow wheel on PyPI: Debian 12 packages no libarrow-dev, and the wheel ships libarrow.so.N,
# libarrow_compute.so.N, libparquet.so.N and their headers. They are found the way pyarrow
# documents for C++ extensions, by asking pyarrow itself (get_include(), get_library_dirs(),
# __version__), with the Python of the venv that setup-deps.sh installs it in.
#
#   TFT_WITH_PARQUET   AUTO (default: on when pyarrow is found), ON (an error without it), OFF
#   TFT_ARROW_PYTHON   the Python whose pyarrow is used; default: $TFT_TORCH_VENV/bin/python,
#                      else ~/.cache/tftrain/venv-torch/bin/python, else python3
#
# Defines tft::arrow (headers and the three libraries, linked by their full versioned paths,
# so no unversioned symlinks are needed in site-packages) and TFT_ARROW_VERSION.
# Arrow 26 or newer is required (tested: 26.0.1, the version setup-deps.sh pins); its headers
# need C++20.
set(TFT_WITH_PARQUET AUTO CACHE STRING "Read Parquet with Arrow C++ from the pyarrow wheel: AUTO, ON or OFF")
set_property(CACHE TFT_WITH_PARQUET PROPERTY STRINGS AUTO ON OFF)
set(_tft_arrow_minimum 26)

if(NOT TFT_WITH_PARQUET STREQUAL "OFF")
  if(NOT TFT_ARROW_PYTHON)
    if(DEFINED ENV{TFT_TORCH_VENV} AND EXISTS "$ENV{TFT_TORCH_VENV}/bin/python")
      set(_tft_arrow_python_default "$ENV{TFT_TORCH_VENV}/bin/python")
    elseif(EXISTS "$ENV{HOME}/.cache/tftrain/venv-torch/bin/python")
      set(_tft_arrow_python_default "$ENV{HOME}/.cache/tftrain/venv-torch/bin/python")
    else()
      find_program(_tft_arrow_python_default NAMES python3)
    endif()
    set(TFT_ARROW_PYTHON "${_tft_arrow_python_default}" CACHE FILEPATH
        "The Python whose pyarrow provides Arrow C++ and Parquet")
  endif()
  set(_tft_arrow_found OFF)
  if(TFT_ARROW_PYTHON)
    execute_process(
      COMMAND "${TFT_ARROW_PYTHON}" -c
        "import pyarrow; print(pyarrow.get_include()); print(pyarrow.get_library_dirs()[0]); print(pyarrow.__version__)"
      OUTPUT_VARIABLE _tft_arrow_out ERROR_VARIABLE _tft_arrow_err
      RESULT_VARIABLE _tft_arrow_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_tft_arrow_rc EQUAL 0)
      string(REPLACE "\n" ";" _tft_arrow_lines "${_tft_arrow_out}")
      list(GET _tft_arrow_lines 0 _tft_arrow_include)
      list(GET _tft_arrow_lines 1 _tft_arrow_libdir)
      list(GET _tft_arrow_lines 2 TFT_ARROW_VERSION)
      string(REGEX MATCH "^[0-9]+" _tft_arrow_major "${TFT_ARROW_VERSION}")
      file(GLOB _tft_arrow_libs "${_tft_arrow_libdir}/libarrow.so.*")
      list(FILTER _tft_arrow_libs INCLUDE REGEX "libarrow\\.so\\.[0-9]+$")
      if(_tft_arrow_major LESS _tft_arrow_minimum)
        set(_tft_arrow_why "pyarrow ${TFT_ARROW_VERSION} is older than ${_tft_arrow_minimum}")
      elseif(NOT _tft_arrow_libs)
        set(_tft_arrow_why "no libarrow.so.N in ${_tft_arrow_libdir}")
      else()
        list(GET _tft_arrow_libs 0 _tft_arrow_lib)
        string(REGEX MATCH "[0-9]+$" _tft_arrow_soversion "${_tft_arrow_lib}")
        set(_tft_arrow_found ON)
      endif()
    else()
      set(_tft_arrow_why "${TFT_ARROW_PYTHON} cannot import pyarrow")
    endif()
  else()
    set(_tft_arrow_why "no Python found")
  endif()

  if(_tft_arrow_found)
    add_library(tft_arrow INTERFACE)
    add_library(tft::arrow ALIAS tft_arrow)
    target_include_directories(tft_arrow SYSTEM INTERFACE "${_tft_arrow_include}")
    target_link_libraries(tft_arrow INTERFACE
      "${_tft_arrow_libdir}/libparquet.so.${_tft_arrow_soversion}"
      "${_tft_arrow_libdir}/libarrow_compute.so.${_tft_arrow_soversion}"
      "${_tft_arrow_libdir}/libarrow.so.${_tft_arrow_soversion}")
    set(TFT_WITH_PARQUET_ENABLED ON)
    message(STATUS "Parquet: Arrow C++ ${TFT_ARROW_VERSION} from pyarrow in ${_tft_arrow_libdir}")
  elseif(TFT_WITH_PARQUET STREQUAL "ON")
    message(FATAL_ERROR "TFT_WITH_PARQUET=ON, but Arrow C++ was not found: ${_tft_arrow_why}. "
                        "scripts/setup-deps.sh installs pyarrow; TFT_ARROW_PYTHON names its Python.")
  else()
    set(TFT_WITH_PARQUET_ENABLED OFF)
    message(STATUS "Parquet: off (${_tft_arrow_why}; scripts/setup-deps.sh installs pyarrow)")
  endif()
else()
  set(TFT_WITH_PARQUET_ENABLED OFF)
  message(STATUS "Parquet: off (TFT_WITH_PARQUET=OFF)")
endif()
