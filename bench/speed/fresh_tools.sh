# Sourced by the drivers that time ./build/bin's tools (operator-calls.sh, precision-benchmarks.sh,
# memory-budget-benchmarks.sh, contention.sh, kernels.sh): build_fresh TARGET... builds them in
# build/ before they run. The benchmarks are not part of `all` (CMakeLists.txt), so after a plain
# `cmake --build build` a driver would time a binary older than the tree it labels its figures
# with: on 2026-12-06 a tft-bench left from an earlier experiment gave 72 fewer calls and a 2.3 MiB
# higher peak than the tree's. Up to date, the build is a no-op of a fraction of a second.
# Usage: source bench/speed/fresh_tools.sh; build_fresh tft-bench tft-train
build_fresh() {
  if [ ! -f build/CMakeCache.txt ]; then
    echo "$(basename "$0"): build/ is not configured: run bench/run-benchmarks.sh (or" \
      "scripts/test.sh) once first" >&2
    exit 1
  fi
  CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 cmake --build build -j "${JOBS:-$(nproc)}" \
    --target "$@" >&2
}
