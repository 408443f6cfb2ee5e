# Checks that the checked-in SWIG output (bindings/go/internal/swig, bindings/csharp/generated)
# is what tftrain.i generates now; run by ctest as
#   cmake -DSWIG=swig -DBINDINGS=<bindings dir> -DOUT=<scratch dir> -P check_generated.cmake
# On a difference: regenerate with bindings/swig/generate.sh and commit the result.
foreach(var SWIG BINDINGS OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_generated.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT}/go ${OUT}/csharp)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env SWIG=${SWIG}
    sh ${BINDINGS}/swig/generate.sh ${OUT}/go ${OUT}/csharp
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "generate.sh failed (${result})")
endif()

set(stale "")
foreach(pair "go|${BINDINGS}/go/internal/swig" "csharp|${BINDINGS}/csharp/generated")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 name)
  list(GET pair 1 checked_in)
  file(GLOB fresh RELATIVE ${OUT}/${name} ${OUT}/${name}/*)
  file(GLOB kept RELATIVE ${checked_in} ${checked_in}/*)
  list(REMOVE_ITEM kept callback.go message.go) # hand-written, beside the generated Go code
  foreach(f IN LISTS fresh kept)
    if(NOT EXISTS ${OUT}/${name}/${f} OR NOT EXISTS ${checked_in}/${f})
      list(APPEND stale "${checked_in}/${f}")
      continue()
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files
      ${OUT}/${name}/${f} ${checked_in}/${f} RESULT_VARIABLE differs)
    if(differs)
      list(APPEND stale "${checked_in}/${f}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES stale)
if(stale)
  string(REPLACE ";" "\n  " stale "${stale}")
  message(FATAL_ERROR "out of date with tftrain.i (run bindings/swig/generate.sh):\n  ${stale}")
endif()
message(STATUS "the checked-in SWIG output matches tftrain.i")
