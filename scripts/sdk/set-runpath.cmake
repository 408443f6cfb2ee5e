# cmake -DFILE=<shared library> -P set-runpath.cmake: FILE's RUNPATH becomes $ORIGIN, so it finds
# the libraries beside it wherever the SDK is unpacked. CMake edits the ELF file in place (its
# file(RPATH_SET), CMake 3.21), which spares the SDK build a patchelf; the new value is shorter
# than the build's absolute one, which is all CMake's editor needs.
cmake_minimum_required(VERSION 3.21)
file(RPATH_SET FILE "${FILE}" NEW_RPATH "\$ORIGIN")
