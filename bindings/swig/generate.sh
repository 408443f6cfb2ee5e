#!/bin/sh
# Regenerates the SWIG output that is checked in (Go and C#) from tftrain.i.
#
#   bindings/swig/generate.sh [GO_OUT_DIR CSHARP_OUT_DIR]
#
# Without arguments it writes bindings/go/internal/swig/{tftrain.go,tftrain_wrap.c} and
# bindings/csharp/generated/*. With arguments (used by the ctest check that the checked-in
# files are up to date) it writes there instead.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
go_out=${1:-$root/bindings/go/internal/swig}
cs_out=${2:-$root/bindings/csharp/generated}
swig=${SWIG:-swig}
mkdir -p "$go_out" "$cs_out"
go_out=$(cd "$go_out" && pwd)
cs_out=$(cd "$cs_out" && pwd)
# Run from here with relative paths: the output names its source and hashes the name, so
# it is the same from any checkout.
cd "$here"
"$swig" -go -cgo -intgosize 64 -package swig -I../../capi/include \
  -outdir "$go_out" -o "$go_out/tftrain_wrap.c" tftrain.i
rm -f "$cs_out"/*.cs "$cs_out"/tftrain_wrap.c
"$swig" -csharp -namespace TfTrain.Swig -dllimport tftrain_csharp -I../../capi/include \
  -outdir "$cs_out" -o "$cs_out/tftrain_wrap.c" tftrain.i
