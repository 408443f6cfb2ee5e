# cmake -DBUILD_DIR=<build folder> -DPROBES=<target:layer:header:expected,...> -P this file
#
# Builds each probe target of tests/layers/CMakeLists.txt. A probe expected to compile must;
# one expected to fail must fail, and its output must name the missing header, so that a probe
# broken for another reason (a typo, a missing library) is not taken for an enforced layer.
string(REPLACE "," ";" probes "${PROBES}")
set(failures 0)
foreach(probe IN LISTS probes)
  string(REPLACE ":" ";" fields "${probe}")
  list(GET fields 0 target)
  list(GET fields 1 layer)
  list(GET fields 2 header)
  list(GET fields 3 expected)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${target}
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  string(REPLACE "." "\\." header_pattern "${header}")
  if(expected STREQUAL "compiles")
    if(status EQUAL 0)
      message(STATUS "ok: layer ${layer} may include ${header}")
    else()
      message(SEND_ERROR "layer ${layer} should see ${header}, but the probe failed:\n${output}")
      math(EXPR failures "${failures} + 1")
    endif()
  elseif(status EQUAL 0)
    message(SEND_ERROR "layer ${layer} includes ${header}, which is above it, and it compiled")
    math(EXPR failures "${failures} + 1")
  elseif(output MATCHES "${header_pattern}: No such file or directory")
    message(STATUS "ok: layer ${layer} cannot include ${header}")
  else()
    message(SEND_ERROR "the probe of ${layer} including ${header} failed, but not for want of "
                       "the header:\n${output}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} layer probe(s) wrong")
endif()
