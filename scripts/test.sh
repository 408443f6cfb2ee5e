#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs every test with ctest.
#
#   scripts/test.sh              LibTorch 2.x from the pinned PyPI wheel (build/): the default
#   scripts/test.sh --release    the release files made from that build (build/dist/): the SDK
#                                archive, the self-contained wheel and the sdist
#                                (scripts/make-sdk.sh, make-wheel.sh, make-sdist.sh), each used
#                                as a host would (sdk-consumer-test.sh, python-consumer-test.sh)
#   scripts/test.sh --debian     Debian's LibTorch 1.13 (build-debian/), file by file (no unity)
#   scripts/test.sh --cuda-compile
#                                the wheel's LibTorch with -DTFT_WITH_CUDA=ON (build-cuda/), on a
#                                machine without a GPU: the CUDA code compiles, links and loads;
#                                the tests labelled cuda skip. The CUDA libraries the wheel links
#                                but this leg never calls are stand-ins (make_cuda_stubs.py).
#   scripts/test.sh --lint       the style check alone (scripts/lint.sh: clang-format, file sizes)
#   scripts/test.sh --fuzz-smoke every libFuzzer target built with clang-14 (scripts/fuzz.sh,
#                                build-fuzz/) and fuzzed for FUZZ_SMOKE_SECONDS (default 5) each,
#                                from its seeds only, so the fuzz build cannot rot
#   scripts/test.sh --all        the lint, wheel, release, Debian, CUDA-compile and fuzz-smoke
#                                legs in turn: what CI runs
#   scripts/test.sh --sanitize   the default leg under ASan+UBSan (build-asan/)
#
# Environment: JOBS (parallel build jobs, default: all cores), CTEST_ARGS (extra ctest flags),
# FUZZ_SMOKE_SECONDS (the fuzz-smoke leg's seconds per target).
set -euo pipefail
cd "$(dirname "$0")/.."

legs=(wheel)
case "${1:-}" in
  ""|--torch-wheel) ;;
  --debian) legs=(debian) ;;
  --cuda-compile) legs=(cuda-compile) ;;
  --lint) legs=(lint) ;;
  --release) legs=(release) ;;
  --fuzz-smoke) legs=(fuzz-smoke) ;;
  --all) legs=(lint wheel release debian cuda-compile fuzz-smoke) ;;
  --sanitize) legs=(sanitize) ;;
  -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
  *) echo "test.sh: unknown option '$1'" >&2; exit 2 ;;
esac
jobs="${JOBS:-$(nproc)}"
# Let ccache hit across checkouts in different folders (CI clones into a fresh one).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# What a leg builds: everything ctest runs. BUILD_TARGETS adds the benchmarks (not in `all`).
build_targets=(all)
with_benchmarks=(all tft-bench tft-kernel-bench tft-read-bench)

build() {  # BUILD_DIR CMAKE_ARGS...
  local build_dir="$1"; shift
  # Tests and bindings on explicitly: the main job configures build/ without them.
  cmake -S . -B "$build_dir" -G Ninja -DTFT_BUILD_TESTS=ON -DTFT_BUILD_BINDINGS=ON "$@"
  cmake --build "$build_dir" -j "$jobs" --target "${build_targets[@]}"
}

run_leg() {
  local leg="$1" build_dir="$2"; shift 2
  echo "== test.sh: $leg leg in $build_dir ==" >&2
  local start=$SECONDS
  build "$build_dir" "$@"
  # shellcheck disable=SC2086
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" ${CTEST_ARGS:-}
  echo "== test.sh: $leg leg passed in $((SECONDS - start)) s ==" >&2
}

for leg in "${legs[@]}"; do
  case "$leg" in
    lint)
      start=$SECONDS
      ./scripts/lint.sh
      echo "== test.sh: lint leg passed in $((SECONDS - start)) s ==" >&2 ;;
    wheel)
      prefix=$(./scripts/setup-deps.sh | tail -n 1)
      run_leg "LibTorch 2.x (PyPI wheel)" build -DTFT_TORCH_PREFIX="$prefix" ;;
    release)
      # The release files of the wheel leg's build (built here when it is not), each used as a
      # host would: unpacked or installed elsewhere, alone.
      echo "== test.sh: release leg from build ==" >&2
      start=$SECONDS
      prefix=$(./scripts/setup-deps.sh | tail -n 1)
      build build -DTFT_TORCH_PREFIX="$prefix"
      archive=$(./scripts/make-sdk.sh build build/dist | tail -n 1)
      ./scripts/sdk-consumer-test.sh "$archive" build/bin/tft_train_yaml
      wheel=$(./scripts/make-wheel.sh build/dist | tail -n 1)
      ./scripts/python-consumer-test.sh "$wheel"
      sdist=$(./scripts/make-sdist.sh build/dist | tail -n 1)
      ./scripts/python-consumer-test.sh "$sdist"
      echo "== test.sh: release leg passed in $((SECONDS - start)) s: the SDK archive, the" \
        "wheel and the sdist, each used as a host would ==" >&2
      ;;
    debian)
      ./scripts/setup-deps.sh --debian
      # File by file, not in unity batches: a file that compiles only beside its batch
      # neighbours (their includes, their names) fails here.
      build_targets=("${with_benchmarks[@]}")
      run_leg "LibTorch 1.13 (Debian)" build-debian -DTFT_TORCH_PREFIX= -DTFT_UNITY_BUILD=OFF ;;
    cuda-compile)
      prefix=$(./scripts/setup-deps.sh --cuda-dev-headers | tail -n 1)
      stubs="${TFT_TORCH_VENV:-$HOME/.cache/tftrain/venv-torch}/cuda-stubs"
      if [ ! -f "$stubs/MANIFEST" ] || [ "$prefix/lib/libtorch_cuda.so" -nt "$stubs/MANIFEST" ]; then
        rm -rf "$stubs"
        python3 scripts/make_cuda_stubs.py "$prefix/lib" "$stubs"
      fi
      # GNU ld looks for a shared library's DT_NEEDED entries on LD_LIBRARY_PATH too, so one
      # variable serves both the link and the test runs (in a subshell: this leg's only).
      (
        export LD_LIBRARY_PATH="$stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        build_targets=("${with_benchmarks[@]}")
        run_leg "LibTorch 2.x with CUDA, no GPU" build-cuda -DTFT_TORCH_PREFIX="$prefix" \
          -DTFT_WITH_CUDA=ON
      ) ;;
    fuzz-smoke)
      # A scratch folder of its own: the run starts from the committed seeds, not from what
      # earlier fuzzing on this machine found, and leaves nothing behind.
      echo "== test.sh: fuzz-smoke leg in build-fuzz ==" >&2
      start=$SECONDS
      scratch=$(mktemp -d)
      JOBS="$jobs" FUZZ_SCRATCH="$scratch" ./scripts/fuzz.sh all "${FUZZ_SMOKE_SECONDS:-5}"
      rm -rf "$scratch"
      echo "== test.sh: fuzz-smoke leg passed in $((SECONDS - start)) s ==" >&2 ;;
    sanitize)
      prefix=$(./scripts/setup-deps.sh | tail -n 1)
      # LibTorch itself is not instrumented; its one-time global allocations are not ours.
      export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
      export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}"
      run_leg sanitize build-asan -DTFT_TORCH_PREFIX="$prefix" -DTFT_SANITIZE=ON ;;
  esac
done
