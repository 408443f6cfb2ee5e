#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-14, ASan and UBSan (build-fuzz/), and
# fuzzes one target or all of them in turn.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]   fuzz for SECONDS per target (default 60)
#   scripts/fuzz.sh --runs N [TARGET|all]    fuzz for N executions per target instead
#   scripts/fuzz.sh --minimize TARGET FILE   shrink a crashing input (writes FILE.min)
#   scripts/fuzz.sh --list                   the targets
#
# Targets: fuzz_train_config, fuzz_checkpoint_yaml, fuzz_checkpoint_json, fuzz_csv_dataset,
# fuzz_arrow_stream (parsers: thousands of inputs a second; the last decodes Arrow IPC bytes
# into the C API's Arrow stream input), fuzz_saved_model, fuzz_snapshot (load a LibTorch
# model per input: 10-300 a second; run in fork mode, and an input that only makes LibTorch's
# zip reader run out of memory is counted, not failed). What each checks is at the top of
# tests/fuzz/<target>.cpp.
#
# The seed corpora in tests/fuzz/corpus/ are only read. New inputs go to
# $FUZZ_SCRATCH/corpus/<target> (default /tmp/tftrain-fuzz), which later runs resume from, and
# crashes to $FUZZ_SCRATCH/artifacts/<target>/. Installs what is missing, clang-14 and
# libclang-rt-14-dev (libFuzzer) included (scripts/setup-deps.sh --fuzz). Ends with a table of
# runs and exec/s per target; exits 1 when a target crashed.
#
# Environment: JOBS (parallel build jobs, default: all cores), FUZZ_SCRATCH, FUZZ_ARGS (more
# libFuzzer flags, e.g. "-max_len=512").
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(fuzz_train_config fuzz_checkpoint_yaml fuzz_checkpoint_json fuzz_csv_dataset
         fuzz_arrow_stream fuzz_saved_model fuzz_snapshot)
usage() { sed -n '2,24p' "$0"; }

mode=fuzz
runs=""
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  --list) printf '%s\n' "${targets[@]}"; exit 0 ;;
  --runs) [ $# -ge 2 ] || { usage >&2; exit 2; }; runs="$2"; shift 2 ;;
  --minimize) [ $# -eq 3 ] || { usage >&2; exit 2; }; mode=minimize; shift ;;
  -*) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
esac
selected="${1:-all}"
seconds="${2:-60}"
if [ "$selected" = all ]; then
  chosen=("${targets[@]}")
else
  printf '%s\n' "${targets[@]}" | grep -qx -- "$selected" ||
    { echo "fuzz.sh: unknown target '$selected' (fuzz.sh --list)" >&2; exit 2; }
  chosen=("$selected")
fi

# clang-14 with its libFuzzer and sanitizer runtimes, and LibTorch: what is missing.
prefix=$(./scripts/setup-deps.sh --fuzz | tail -n 1)

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# Only the libraries the targets link and the targets themselves: no tests or bindings. With
# Arrow C++ (the pyarrow wheel's, built with GCC and libstdc++, which clang links as is):
# fuzz_arrow_stream decodes its inputs with it.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DTFT_BUILD_FUZZERS=ON -DTFT_BUILD_TESTS=OFF -DTFT_BUILD_BINDINGS=OFF -DTFT_WITH_PARQUET=ON \
  -DTFT_TORCH_PREFIX="$prefix" >/dev/null
cmake --build build-fuzz -j "${JOBS:-$(nproc)}" --target "${chosen[@]}"

scratch="${FUZZ_SCRATCH:-/tmp/tftrain-fuzz}"
# LibTorch is not instrumented; its one-time global allocations are not ours (as in test.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
export OMP_NUM_THREADS=1  # one core per fuzzer: its speed, not LibTorch's threads

if [ "$mode" = minimize ]; then
  file="$2"
  ./build-fuzz/bin/"$selected" -minimize_crash=1 -max_total_time="${MINIMIZE_SECONDS:-120}" \
    -exact_artifact_path="$file.min" "$file"
  echo "fuzz.sh: minimized input in $file.min ($(wc -c <"$file.min") bytes)" >&2
  exit 0
fi

# Whether `target` on input `file` runs out of memory inside LibTorch's zip reader (see the fork
# mode below): then it is LibTorch's trust in the archive's stated record sizes, not a finding of
# ours. Its unpickler's trust in the lengths and memo indices of a pickle is no excuse any more:
# the loader checks those first (src/store/pickle_bounds.h), so an out-of-memory there is ours.
# The RSS limit is raised above libFuzzer's 2 GiB default: ASan poisons the shadow of a huge
# allocation (an eighth of it) before libFuzzer's malloc hook sees the allocation, so under the
# default the RSS watchdog fired first, with no stack to sort by. The stack is unwound the slow
# way, as LibTorch has no frame pointers: the fast unwinder stops at its first frame.
libtorch_allocation() {
  local report
  report=$(ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" \
    ./build-fuzz/bin/"$1" -malloc_limit_mb=1024 -rss_limit_mb=8192 "$2" 2>&1 || true)
  grep -qE 'out-of-memory|allocation-size-too-big' <<<"$report" &&
    grep -q 'caffe2::serialize::PyTorchStreamReader' <<<"$report"
}

summary=()
crashed=()
for target in "${chosen[@]}"; do
  corpus="$scratch/corpus/$target" artifacts="$scratch/artifacts/$target/"
  mkdir -p "$corpus" "$artifacts"
  if [ -n "$runs" ]; then limit=(-runs="$runs") what="$runs runs"
  else limit=(-max_total_time="$seconds") what="$seconds s"; fi
  dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
  # LibTorch's zip reader trusts the record sizes an archive states, so a crafted one can make it
  # allocate gigabytes: without ASan a std::bad_alloc or c10's out-of-memory error, which
  # load_archive_from_bytes reports as an IoError, but ASan's allocator aborts instead. The
  # LibTorch targets therefore run in libFuzzer's fork mode, which saves each crashing input and
  # goes on, and each is sorted below (libtorch_allocation).
  fork=()
  case "$target" in
    fuzz_saved_model|fuzz_snapshot) fork=(-fork=1 -ignore_ooms=1 -ignore_crashes=1) ;;
  esac
  log="$scratch/$target.log"
  echo "== fuzz.sh: $target ($what); log $log ==" >&2
  started="$scratch/.started-$target"
  touch "$started"
  # The first folder receives new inputs; the seed folder after it is only read.
  # shellcheck disable=SC2086
  ./build-fuzz/bin/"$target" "${limit[@]}" "${fork[@]}" "${dict[@]}" \
    -artifact_prefix="$artifacts" -print_final_stats=1 ${FUZZ_ARGS:-} \
    "$corpus" "tests/fuzz/corpus/$target" >"$log" 2>&1 || true
  # libFuzzer's last words: "Done 1234567 runs in 601 second(s)"; in fork mode the last
  # progress line, "#1234: cov: ... time: 601s job: 40 ...", and "INFO: exiting: N time: 601s".
  # N is the exit code of the last job, so a run whose last job crashed ends with 1 although it
  # went on to the end: every crash it saved is sorted below, whatever N says.
  n="" s=""
  done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true)
  fork_line=$(grep -E '^#[0-9]+: cov: .* time: [0-9]+s' "$log" | tail -n 1 || true)
  if [ -n "$done_line" ]; then
    n=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) .*/\1/' <<<"$done_line")
    s=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) .*/\2/' <<<"$done_line")
  elif exit_line=$(grep -E '^INFO: exiting: [0-9]+ time: [0-9]+s' "$log" | tail -n 1); then
    # A first job that crashed before its first progress line leaves no count: 0 runs.
    n=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"${fork_line:-#0:}")
    s=$(sed -E 's/.* time: ([0-9]+)s.*/\1/' <<<"$exit_line")
  fi
  size=$(find "$corpus" "tests/fuzz/corpus/$target" -type f | wc -l)
  new_findings=() libtorch_ooms=()
  while IFS= read -r artifact; do
    if [ "${#fork[@]}" -gt 0 ] && libtorch_allocation "$target" "$artifact"; then
      libtorch_ooms+=("$artifact")
    else
      new_findings+=("$artifact")
    fi
  done < <(find "$artifacts" -type f -newer "$started")
  if [ -n "$n" ]; then
    summary+=("$(printf '%-22s %12s %8s %10s %8s %12s' "$target" "$n" "$s" \
                  "$(( n / (s > 0 ? s : 1) ))" "$size" "${#libtorch_ooms[@]}")")
  else
    summary+=("$(printf '%-22s %12s' "$target" "stopped (see the log)")")
  fi
  if [ "${#new_findings[@]}" -gt 0 ] || [ -z "$n" ]; then
    crashed+=("$target")
    grep -E 'ERROR: |broken contract|runtime error|deadly signal' "$log" | head -n 5 >&2 || true
    printf '%s\n' "${new_findings[@]}" >&2
  fi
done

printf '\n%-22s %12s %8s %10s %8s %12s\n' target runs seconds exec/s corpus libtorch-oom
printf '%s\n' "${summary[@]}"
if [ "${#crashed[@]}" -gt 0 ]; then
  echo "fuzz.sh: findings in ${crashed[*]}: inputs in $scratch/artifacts/<target>/" >&2
  exit 1
fi
