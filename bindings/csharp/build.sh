#!/bin/sh
# Builds the C# binding, its tests and the example runner with Debian's mono (mcs) and a C
# compiler:
#
#   bindings/csharp/build.sh [OUT_DIR [LIB_DIR [GENERATED_INCLUDE_DIR]]]
#
# OUT_DIR (default bindings/csharp/out) receives libtftrain_csharp.so (the SWIG wrapper,
# linked to libtftrain), TfTrain.dll, TfTrainTests.exe and tft_train_yaml_csharp.exe.
# LIB_DIR (default build/lib) holds libtftrain.so, GENERATED_INCLUDE_DIR (default
# build/capi/include) the build's tftrain_version.h. Run the tests with
#   LD_LIBRARY_PATH=OUT_DIR:LIB_DIR mono OUT_DIR/TfTrainTests.exe
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/out}
lib=${2:-$root/build/lib}
generated=${3:-$root/build/capi/include}
mkdir -p "$out"
out=$(cd "$out" && pwd)
lib=$(cd "$lib" && pwd)
${CC:-cc} -shared -fPIC -O2 -w -I"$root/capi/include" -I"$generated" \
  "$here/generated/tftrain_wrap.c" \
  -L"$lib" -ltftrain -Wl,-rpath,"$lib" -o "$out/libtftrain_csharp.so"
${MCS:-mcs} -nologo -warnaserror+ -nowarn:1591 -unsafe -target:library -out:"$out/TfTrain.dll" \
  "$here"/generated/*.cs "$here"/src/*.cs
${MCS:-mcs} -nologo -out:"$out/TfTrainTests.exe" -r:"$out/TfTrain.dll" "$here"/tests/*.cs
${MCS:-mcs} -nologo -out:"$out/tft_train_yaml_csharp.exe" -r:"$out/TfTrain.dll" -r:System.Numerics \
  "$root"/examples/csharp/*.cs
