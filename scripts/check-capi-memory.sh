#!/usr/bin/env bash
# The C API's test programs under the two memory checkers the C API issue asks for:
#
#   scripts/check-capi-memory.sh asan       ASan + UBSan build (build-asan/), C API tests
#   scripts/check-capi-memory.sh valgrind   valgrind memcheck over the normal build (build/):
#                                           no invalid access, no definite leak
#   scripts/check-capi-memory.sh            both
#
# Slow (an instrumented LibTorch-linked build, or every call under valgrind), so not part of
# test.sh; run it when the C API changes.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=(test_capi_checkpoint test_capi_trainer test_capi_threads test_capi_data)
modes=("${1:-all}")
[[ "${modes[0]}" == all ]] && modes=(asan valgrind)
jobs="${JOBS:-$(nproc)}"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 OMP_NUM_THREADS=2
# What ctest gives these tests (tft_test_path in tests/CMakeLists.txt): they run here without it.
export TFT_EXAMPLES_DIR="$PWD/examples"
prefix=$(./scripts/setup-deps.sh | tail -n 1)  # the default LibTorch, as in test.sh

for mode in "${modes[@]}"; do
  case "$mode" in
    asan)
      export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
      export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}"
      cmake -S . -B build-asan -G Ninja -DTFT_TORCH_PREFIX="$prefix" -DTFT_SANITIZE=ON \
        -DTFT_BUILD_TESTS=ON >/dev/null
      cmake --build build-asan -j "$jobs" --target "${tests[@]}"
      for t in "${tests[@]}"; do
        echo "== asan: $t ==" >&2
        ./build-asan/bin/"$t"
      done ;;
    valgrind)
      command -v valgrind >/dev/null || { echo "valgrind is missing (apt install valgrind)" >&2; exit 1; }
      cmake -S . -B build -G Ninja -DTFT_TORCH_PREFIX="$prefix" -DTFT_BUILD_TESTS=ON >/dev/null
      cmake --build build -j "$jobs" --target "${tests[@]}"
      for t in "${tests[@]}"; do
        echo "== valgrind: $t ==" >&2
        # Definite leaks and invalid accesses fail; LibTorch's and OpenMP's one-time global
        # allocations show as "still reachable"/"possibly lost" and are not ours.
        valgrind --quiet --error-exitcode=99 --leak-check=full \
          --errors-for-leak-kinds=definite --show-leak-kinds=definite \
          --suppressions=tests/valgrind.supp ./build/bin/"$t"
      done ;;
    *) echo "check-capi-memory.sh: unknown mode '$mode' (asan, valgrind)" >&2; exit 2 ;;
  esac
done
echo "check-capi-memory.sh: ${modes[*]} clean" >&2
