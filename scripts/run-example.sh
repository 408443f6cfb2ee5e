#!/usr/bin/env bash
# The main job: installs what is missing, builds the runner tft-train, and trains the S&P 500
# example (examples/configs/sp500.yaml: next 5 trading days' close from the last 60) with
# gradient checkpointing. Progress goes to stderr, the summary (losses, q-risk, samples/s,
# measured vs predicted activation memory) to stdout; the model, forecast.csv, forecast.svg,
# interpretation.json, interpretation.svg and summary.json land in build/runs/sp500/.
#
# Extra arguments go to tft-train, e.g. --epochs 3, --no-gradient-checkpointing, --resume.
set -euo pipefail
cd "$(dirname "$0")/.."
# LibTorch 2.x from the pinned PyPI wheel, and what the runner builds from; nothing that only the
# tests and the bindings need (scripts/test.sh installs and builds those when it runs).
prefix=$(./scripts/setup-deps.sh --build-only | tail -n 1)
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1  # share the cache with test.sh's builds
cmake -S . -B build -G Ninja -DTFT_TORCH_PREFIX="$prefix" -DTFT_BUILD_TESTS=OFF \
  -DTFT_BUILD_BINDINGS=OFF >/dev/null
cmake --build build -j "${JOBS:-$(nproc)}" --target tft-train >&2  # stdout is the summary
exec ./build/bin/tft-train --config examples/configs/sp500.yaml --use-gradient-checkpointing "$@"
