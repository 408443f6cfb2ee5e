#!/usr/bin/env bash
# The main job: installs what is missing, builds, and trains with and without gradient
# checkpointing, printing losses, gradient equality and peak activation memory.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "${JOBS:-$(nproc)}" --target tft-checkpoint-demo
exec ./build/bin/tft-checkpoint-demo "$@"
