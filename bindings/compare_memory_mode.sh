#!/bin/sh
# Runs a runner twice on CONFIG: reading data.path itself, and with --memory (the runner reads
# the CSV into its language's Arrow table and trains from memory). Both must print the same
# final_validation_loss and write the same forecast.csv (bytes).
#
#   compare_memory_mode.sh CONFIG OUT_DIR COMMAND [ARG ...]
#
# COMMAND [ARG ...] starts the runner, e.g. build/bindings/go/tft_train_yaml_go, or
# mono build/bindings/csharp/tft_train_yaml_csharp.exe.
set -eu
if [ $# -lt 3 ]; then
  echo "usage: $0 CONFIG OUT_DIR COMMAND [ARG ...]" >&2
  exit 2
fi
config=$1
out=$2
shift 2
rm -rf "$out"
mkdir -p "$out"
"$@" "$config" "output.directory=$out/file" >"$out/file.txt"
"$@" --memory "$config" "output.directory=$out/memory" >"$out/memory.txt"
file_loss=$(grep '^final_validation_loss:' "$out/file.txt" || true)
memory_loss=$(grep '^final_validation_loss:' "$out/memory.txt" || true)
if [ -z "$file_loss" ] || [ "$file_loss" != "$memory_loss" ]; then
  echo "final_validation_loss differs: file '$file_loss', --memory '$memory_loss'" >&2
  exit 1
fi
if ! cmp -s "$out/file/forecast.csv" "$out/memory/forecast.csv"; then
  echo "forecast.csv differs between the file and the --memory runs ($out)" >&2
  exit 1
fi
echo "file and --memory agree: $memory_loss, forecast.csv identical"
