#!/usr/bin/env bash
# The SDK archive as a host uses it: unpacked in a fresh folder outside the repository, with
# nothing of the build or of ~/.cache/tftrain on any path, it builds each language's runner
# (C through pkg-config and through find_package, Go, Rust, C#) and trains tiny.yaml with each;
# their summaries must agree with each other and with REFERENCE_RUNNER's, today's C runner of
# the repository build, when given (bindings/compare_runners.sh compares them).
#
#   scripts/sdk-consumer-test.sh ARCHIVE [REFERENCE_RUNNER]
#
# Needs cc, cmake, pkg-config, go, cargo, mcs and mono on PATH (scripts/setup-deps.sh). Leaves
# nothing behind but the folder it names when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
archive=$(realpath "$1")
reference=${2:+$(realpath "$2")}

work=$(mktemp -d "${TMPDIR:-/tmp}/tftrain-sdk-consumer.XXXXXX")
trap 'echo "sdk-consumer-test: FAILED; the work is in $work" >&2' ERR
tar -xzf "$archive" -C "$work"
sdk=$(echo "$work"/tftrain-*-linux-x86_64)
(cd "$sdk" && sha256sum --quiet -c SHA256SUMS)

# The host's environment: no library path, no tftrain variables, nothing of ours on PATH.
unset LD_LIBRARY_PATH TFTRAIN_LIB_DIR TFTRAIN_INCLUDE_DIR TFTRAIN_LIBRARY CMAKE_PREFIX_PATH
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -e "$root" -e "$HOME/.cache/tftrain" | paste -sd:)
export PATH PKG_CONFIG_PATH="$sdk/lib/pkgconfig"

# Every library in the SDK resolves to the SDK or to the system's C and C++ runtimes.
for library in "$sdk"/lib/*.so*; do
  outside=$(ldd "$library" | awk '$2 == "=>" { print $3 }' |
    grep -v -e "^$sdk/lib/" -e '^/lib/' -e '^/usr/lib/' -e '^/lib64/' || true)
  if ldd "$library" | grep -q 'not found' || [ -n "$outside" ]; then
    echo "sdk-consumer-test: $(basename "$library") loads from outside the SDK:" >&2
    ldd "$library" >&2
    exit 1
  fi
done

examples="$sdk/examples"
mkdir -p "$work/c-pkg-config" "$work/csharp"
cc -std=c99 -O2 "$examples/c/tft_train_yaml.c" $(pkg-config --cflags --libs tftrain) \
  -o "$work/c-pkg-config/tft_train_yaml"
cmake -S "$examples/c" -B "$work/c-cmake" -DCMAKE_PREFIX_PATH="$sdk" >/dev/null
cmake --build "$work/c-cmake" >/dev/null
(cd "$examples/go" && go build -o "$work/go/tft_train_yaml_go" .)
(cd "$examples/rust" && CARGO_TARGET_DIR="$work/rust" cargo build --quiet --release --locked)
mcs -nologo -r:"$sdk/lib/TfTrain.dll" -r:System.Numerics -out:"$work/csharp/tft_train_yaml.exe" \
  "$examples"/csharp/*.cs
export MONO_PATH="$sdk/lib"  # TfTrain.dll, and beside it the native libraries it loads

config="$examples/configs/tiny.yaml"
sh "$root/bindings/compare_runners.sh" "$config" "$work/runs" "$work/c-cmake/tft_train_yaml" \
  "$work/go/tft_train_yaml_go" "$work/csharp/tft_train_yaml.exe" \
  "$work/rust/release/tft_train_yaml_rust" -
# Two more C runners against the first's summary: the one pkg-config built, and today's.
for runner in "$work/c-pkg-config/tft_train_yaml" $reference; do
  "$runner" "$config" "output.directory=$work/runs/more/run" >"$work/runs/more.stdout" \
    2>"$work/runs/more.stderr"
  if ! diff -u "$work/runs/c/summary" <(grep -v '^samples_per_second:' "$work/runs/more.stdout"); then
    echo "sdk-consumer-test: $runner's summary differs from the SDK's C runner's" >&2
    exit 1
  fi
done
echo "sdk-consumer-test: OK: $(basename "$archive"): C (pkg-config, find_package), Go, C# and" \
  "Rust built from the SDK alone and trained tiny.yaml alike${reference:+, and as the reference runner}"
rm -rf "$work"
trap - ERR
