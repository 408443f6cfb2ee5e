#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs consumer/main.c against
# it twice: through find_package(tftrain) and through pkg-config. PRELOAD (a sanitized build's
# ASan runtime) is preloaded into the consumers only, not into the tools that build them.
#   check_consumer.sh BUILD_DIR WORK_DIR [PRELOAD]
set -euo pipefail
build_dir="$1" work="$2" preload="${3:-}"
run() { if [ -n "$preload" ]; then LD_PRELOAD="$preload" "$@"; else "$@"; fi; }
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$work" && mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build_dir" --prefix "$prefix" --component Unspecified >/dev/null
libdir=$(find "$prefix" -name 'libtftrain.so.0' -printf '%h\n' | head -n 1)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

cmake -S "$here" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
run "$work/cmake-build/consumer_cmake"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror "$here/main.c" -o "$work/consumer_pkgconfig" \
  $(pkg-config --cflags --libs tftrain)
run "$work/consumer_pkgconfig"
