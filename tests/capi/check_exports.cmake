# Fails unless the dynamic symbols defined by LIBRARY are exactly the functions HEADER declares
# (TFT_API ... tft_name(...)): only tft_* leaves the library (tftrain.map), nothing the header
# declares is missing, and no removed name lingers.
#   cmake -DLIBRARY=libtftrain.so -DHEADER=tftrain.h -P check_exports.cmake
execute_process(COMMAND nm -D --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(exported "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-f]+ [A-Za-z] ([^@]+)")  # without a version suffix (@@TFTRAIN_0)
    set(name "${CMAKE_MATCH_1}")
    if(name MATCHES "^TFTRAIN_")
      continue()  # the version node of tftrain.map
    endif()
    if(NOT name MATCHES "^tft_")
      message(FATAL_ERROR "exported symbol that is not part of the C API: ${name}")
    endif()
    list(APPEND exported "${name}")
  endif()
endforeach()

file(READ ${HEADER} header)
# The name follows a space, a '*' or a line break (clang-format puts a long name on a line of
# its own after "TFT_API tft_status").
string(REGEX MATCHALL "TFT_API [^;(]*[ *\n](tft_[a-z0-9_]+)\\(" declarations "${header}")
set(declared "")
foreach(declaration IN LISTS declarations)
  string(REGEX REPLACE ".*[ *\n](tft_[a-z0-9_]+)\\($" "\\1" name "${declaration}")
  list(APPEND declared "${name}")
endforeach()
list(LENGTH declared count)
if(count LESS 10)
  message(FATAL_ERROR "only ${count} functions found in ${HEADER}: the pattern is broken")
endif()

set(missing ${declared})
list(REMOVE_ITEM missing ${exported})
set(extra ${exported})
list(REMOVE_ITEM extra ${declared})
if(missing OR extra)
  message(FATAL_ERROR "declared but not exported: ${missing}\nexported but not declared: ${extra}")
endif()
message(STATUS "${count} exported symbols, all tft_*, exactly the functions tftrain.h declares")
