#!/usr/bin/env bash
# One prepared call on a lent GPU machine (bench/gpu/README.md): build with CUDA, run the CUDA
# tests, tft-bench and the peer at batch 64 (float32, bf16-mixed, 16-mixed) and 256 (float32),
# compare, sweep memory budgets against the fixed strategies, and write it all to one folder.
#
#   bash bench/gpu/run.sh OUTNAME               on the device, from the repo root, with
#                                               carry=["bench/gpu/payload"] (prepare.sh made it)
#   bash bench/gpu/run.sh --cpu-smoke OUTNAME   here, without a GPU: the same flow against an
#                                               existing build (TFT_BUILD_DIR, default build),
#                                               no build, --device cpu, 1 step: tests the plumbing
#
# Writes ${OUT:-/tmp}/OUTNAME/: one NAME.log per step, steps.tsv (step, rc, seconds),
# env.txt, ours-bN.{json,md}, peer-bN.json, comparison.md, summary.md. A step that fails is
# recorded and the next one runs where it still can; no step may outlast the whole budget
# (TFT_GPU_BUDGET seconds, default 420: the call has 480 s, and start and transfers need some).
set -uo pipefail

usage() { echo "usage: bash bench/gpu/run.sh [--cpu-smoke] OUTNAME" >&2; exit 2; }
mode=gpu
if [[ "${1:-}" == "--cpu-smoke" ]]; then mode=cpu-smoke; shift; fi
[[ $# -eq 1 && -n "$1" && "$1" != -* ]] || usage

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 2
dir="$(mkdir -p "${OUT:-/tmp}/$1" && cd "${OUT:-/tmp}/$1" && pwd)" || exit 2
payload="$root/bench/gpu/payload"
deps="$payload/deps/usr"
deplib="$deps/lib/x86_64-linux-gnu"
budget="${TFT_GPU_BUDGET:-420}"
reserve=15                      # kept back for the summary
start=$SECONDS
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
: >"$dir/run.log"
printf 'step\trc\tseconds\n' >"$dir/steps.tsv"

say() { echo "$*" | tee -a "$dir/run.log"; }

# step NAME LIMIT cmd...: runs cmd (a command or an exported function) under `timeout`, its
# output in NAME.log, its rc and seconds in steps.tsv. Never longer than what is left of the
# budget; skipped (rc "skip") when under 5 s are left. Returns cmd's rc.
step() {
  local name="$1" limit="$2"
  shift 2
  local left=$((budget - (SECONDS - start) - reserve))
  if ((left < 5)); then
    printf '%s\tskip\t0\n' "$name" >>"$dir/steps.tsv"
    say "== $name: skipped (budget spent)"
    return 125
  fi
  ((limit > left)) && limit=$left
  say "== $name (limit ${limit}s): $*"
  # `timeout` runs programs; an exported function runs in a child bash.
  declare -F "$1" >/dev/null && set -- bash -c '"$@"' bash "$@"
  local t0=$SECONDS rc
  timeout -k 5 "$limit" "$@" >"$dir/$name.log" 2>&1 </dev/null
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >>"$dir/steps.tsv"
  say "   rc $rc, $((SECONDS - t0)) s$( ((rc == 124)) && echo ' (timed out)')"
  return "$rc"
}

# --- what this mode uses --------------------------------------------------------------------
if [[ "$mode" == gpu ]]; then
  if [[ ! -f "$deplib/cmake/yaml-cpp/yaml-cpp-config.cmake" ]] || ! ls "$payload"/wheels/*.whl >/dev/null 2>&1; then
    msg="run.sh: $payload is missing or incomplete: run bench/gpu/prepare.sh here first and pass carry=[\"bench/gpu/payload\"]"
    echo "$msg" | tee "$dir/ERROR" >&2
    exit 2
  fi
  build="$root/build-gpu"
  device=cuda
  steps=10 warmup=3 threads=4
else
  build="$(cd "${TFT_BUILD_DIR:-build}" 2>/dev/null && pwd)" || {
    echo "run.sh --cpu-smoke: build folder '${TFT_BUILD_DIR:-build}' does not exist" | tee "$dir/ERROR" >&2
    exit 2
  }
  device=cpu
  steps=1 warmup=0 threads=2
fi
config="${TFT_BENCH_CONFIG:-bench/configs/reference.yaml}"
[[ "$config" == /* ]] || config="$root/$config"

# The payload fills gaps only: its bin/ (pkgconf, ninja) goes at the END of PATH; its libraries
# (yaml-cpp, cmocka, pkgconf's) are not on the device at all.
if [[ -d "$deps" ]]; then
  export PATH="$PATH:$deps/bin"
  export LD_LIBRARY_PATH="$deplib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$deplib/pkgconfig:$deps/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi
export OMP_NUM_THREADS="$threads"
export root dir build deps deplib device steps warmup threads work payload

# --- a. the environment ---------------------------------------------------------------------
environment() {
  set +e
  echo "# $(date -u +%FT%TZ), $(uname -srm), $(sed -n "s/^PRETTY_NAME=//p" /etc/os-release 2>/dev/null | tr -d '"')"
  echo "# git: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo '(no .git)')"
  git -C "$root" status --short 2>/dev/null | head -40
  echo "## nvidia-smi"; nvidia-smi 2>&1
  echo "## torch"
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available()); print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device")' 2>&1
  echo "## python packages"
  python3 - <<'PY' 2>&1
import importlib, sys
print(sys.version.split()[0], sys.executable)
for m in ("numpy", "scipy", "pandas", "sklearn", "lightning", "torchmetrics", "yaml", "narwhals",
          "pytorch_forecasting", "skbase"):
    try:
        print(f"{m} {getattr(importlib.import_module(m), '__version__', '?')}")
    except Exception as e:
        print(f"{m} MISSING ({type(e).__name__}: {e})")
PY
  python3 -m pip --version 2>&1
  echo "## tools"
  echo "nproc $(nproc)"; free -g 2>&1 | head -2; df -h "$root" 2>&1 | tail -1
  gcc --version 2>&1 | head -1; cmake --version 2>&1 | head -1; nvcc --version 2>&1 | tail -2
  echo "ninja $(command -v ninja) $(ninja --version 2>&1)"
  echo "pkg-config $(command -v pkg-config) $(pkg-config --version 2>&1)"
  echo "ccache $(command -v ccache || echo none)"
}
export -f environment
step env 60 environment
mv "$dir/env.log" "$dir/env.txt"

# --- b. configure + build -------------------------------------------------------------------
if [[ "$mode" == gpu ]]; then
  torch_prefix="$(timeout 60 python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))' 2>>"$dir/run.log")"
  generator="Unix Makefiles"
  ninja --version >/dev/null 2>&1 && generator=Ninja
  # A folder left by an earlier call with another generator cannot be reconfigured.
  if [[ -f "$build/CMakeCache.txt" ]] && ! grep -qx "CMAKE_GENERATOR:INTERNAL=$generator" "$build/CMakeCache.txt"; then
    rm -rf "$build"
  fi
  configure_args=(-S "$root" -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release
    -DTFT_WITH_CUDA=ON -DTFT_BUILD_BINDINGS=OFF -DTFT_TORCH_PREFIX="$torch_prefix"
    -Dyaml-cpp_DIR="$deplib/cmake/yaml-cpp"
    -Dnlohmann_json_DIR="$deps/share/cmake/nlohmann_json"
    -DCLI11_DIR="$deps/share/cmake/CLI11"
    -DTFT_GLOO_INCLUDE_DIR="$deps/include")
  # NCCL needs the headers of the machine's pip packages (nccl, cublas, ...) or toolkit; where
  # they are missing, the rest of the run must not be lost: build without it and say so.
  if ! step configure 120 cmake "${configure_args[@]}"; then
    say "   configure failed with NCCL (configure.log); again with -DTFT_WITH_NCCL=OFF"
    step configure-without-nccl 120 cmake "${configure_args[@]}" -DTFT_WITH_NCCL=OFF
  fi
  # Keep going past a failing file (-k) so tft-bench and the other tests still get built.
  keep_going=(-k 0)
  [[ "$generator" == Ninja ]] || keep_going=(-k)
  # The benchmarks are not in `all` (the root CMakeLists.txt): name them.
  step build 300 cmake --build "$build" -j16 --target all tft-bench tft-kernel-bench \
    tft-read-bench -- "${keep_going[@]}"
  grep -E "error:|FAILED:" "$dir/build.log" | head -20 >"$dir/build-errors.txt"
else
  printf 'configure\tskip\t0\nbuild\tskip\t0\n' >>"$dir/steps.tsv"
  say "== configure, build: skipped (--cpu-smoke uses $build)"
fi

# --- c. CUDA tests (the full suite comes last: second priority) -----------------------------
step ctest-cuda 120 ctest --test-dir "$build" -L cuda --no-tests=ignore --output-on-failure --timeout 100
grep -q "No tests were found" "$dir/ctest-cuda.log" && say "   ctest -L cuda: no tests labelled cuda"
# NCCL's collectives on this machine's GPU(s) (skipped inside when the build has no NCCL).
step nccl 60 "$build/bin/test_distributed"
grep -E "NCCL:|skipped:" "$dir/nccl.log" | sed 's/^/   /' | while IFS= read -r line; do say "$line"; done

# --- d-f. tft-bench, the peer, the comparison: at the config's batch, then at 256 -----------
batch0="$(sed -nE 's/^batch_size:[[:space:]]*([0-9]+).*/\1/p' "$config")"
config256="$dir/$(basename "$config" .yaml)-b256.yaml"
sed -E 's/^batch_size:[[:space:]]*[0-9]+/batch_size: 256/' "$config" >"$config256"
if [[ -z "$batch0" ]] || ! grep -qx 'batch_size: 256' "$config256"; then
  say "run.sh: no top-level batch_size in $config; batch 256 runs the config unchanged"
fi
[[ "$batch0" == 256 ]] && config256=""

# The peer: the device's system python with the two travelling wheels in a throwaway target;
# --cpu-smoke uses the peer venv (bench/peer/setup.sh) when there is one.
peer_python=python3
peer_site="$work/peer-site"
if [[ "$mode" == cpu-smoke && -x "$HOME/.cache/tftrain/venv-peer/bin/python" ]]; then
  peer_python="$HOME/.cache/tftrain/venv-peer/bin/python"
  peer_site=""
fi
export peer_python peer_site
peer_install() {
  set +e
  if [[ -n "$peer_site" ]]; then
    mkdir -p "$peer_site"
    # --target skips pip's externally-managed check (PEP 668); without pip, or should pip
    # refuse anyway, the pure-Python wheels are just unzipped.
    if ! python3 -m pip install --no-deps --no-index --disable-pip-version-check \
         --target "$peer_site" "$payload"/wheels/*.whl; then
      echo "pip install failed or no pip: unzipping the wheels"
      for w in "$payload"/wheels/*.whl; do python3 -m zipfile -e "$w" "$peer_site" || return; done
    fi
  fi
  echo "## $peer_python --check-import"
  PYTHONPATH="$peer_site${PYTHONPATH:+:$PYTHONPATH}" "$peer_python" \
    "$root/bench/peer/peer_bench.py" --check-import
}
peer_run() {  # peer_run CONFIG JSON PRECISION
  PYTHONPATH="$peer_site${PYTHONPATH:+:$PYTHONPATH}" "$peer_python" "$root/bench/peer/peer_bench.py" \
    --config "$1" --device "$device" --strategies none,naive --steps "$steps" --warmup "$warmup" \
    --threads "$threads" --precision "$3" --count-ops --json "$2"
}
compare_run() {  # compare_run OURS PEER TITLE TABLE: the table to TABLE, warnings to the log
  python3 "$root/bench/speed/peer-comparison.py" "$1" "$2" --title "$3" >"$4"
}
export -f peer_install peer_run compare_run

gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/^NVIDIA //')"
[[ "$mode" == cpu-smoke ]] && gpu_name="CPU smoke"
: "${gpu_name:=GPU}"
: >"$dir/comparison.md"
peer_ready=0
labels=()

bench_pair() {  # bench_pair LABEL CONFIG BATCH PRECISION (training.precision, both tools)
  local label="$1" cfg="$2" batch="$3" precision="$4"
  labels+=("$label")
  step "ours-$label" 120 "$build/bin/tft-bench" --config "$cfg" --device "$device" \
    --strategies none,full --steps "$steps" --warmup "$warmup" --threads "$threads" \
    --precision "$precision" --json "$dir/ours-$label.json" --markdown "$dir/ours-$label.md"
  if ((peer_ready == 0)); then
    step peer-install 90 peer_install && peer_ready=1 || peer_ready=-1
  fi
  if ((peer_ready == 1)); then
    step "peer-$label" 150 peer_run "$cfg" "$dir/peer-$label.json" "$precision"
  fi
  if [[ -s "$dir/ours-$label.json" && -s "$dir/peer-$label.json" ]]; then
    step "compare-$label" 30 compare_run "$dir/ours-$label.json" "$dir/peer-$label.json" \
      "$gpu_name, batch $batch, precision $precision" "$work/compare-$label.md"
    if [[ -s "$work/compare-$label.md" ]]; then
      cat "$dir/compare-$label.log" "$work/compare-$label.md" >>"$dir/comparison.md"
      echo >>"$dir/comparison.md"
    fi
  else
    say "   compare-$label: skipped (ours-$label.json or peer-$label.json missing)"
  fi
}
# float32 first, then the two mixed precisions (Lightning's names; the peer under torch.autocast,
# 16-mixed with its loss scaling); on the CPU smoke only what the CPU runs.
bench_pair "b${batch0:-0}" "$config" "${batch0:-?}" 32
bench_pair "b${batch0:-0}-bf16" "$config" "${batch0:-?}" bf16-mixed
[[ "$mode" == gpu ]] && bench_pair "b${batch0:-0}-fp16" "$config" "${batch0:-?}" 16-mixed
[[ -n "$config256" ]] && bench_pair b256 "$config256" 256 32

# --- f'. memory budgets (checkpoint.memory_budget) against the fixed strategies, on the GPU's
# caching-allocator statistics: 6 budgets from none's peak down to full+int8's -------------------
step memory-budget 150 "$build/bin/tft-bench" --config "$config" --device "$device" \
  --strategies none,full,full+bf16,full+int8,unit:historical_encoder,unit:lstm_encoder,uniform:2,selective:1,3 \
  --memory-budget sweep:6 --steps "$steps" --warmup "$warmup" --threads "$threads" \
  --json "$dir/memory-budget.json" --markdown "$dir/memory-budget.md"

# --- c'. the whole suite, with what is left -------------------------------------------------
if [[ "$mode" == gpu || "${TFT_SMOKE_CTEST:-0}" == 1 ]]; then
  step ctest-all 150 ctest --test-dir "$build" -LE cuda -j8 --timeout 120 --output-on-failure
  [[ -f "$build/Testing/Temporary/LastTestsFailed.log" ]] &&
    cp "$build/Testing/Temporary/LastTestsFailed.log" "$dir/ctest-failed.txt"
else
  printf 'ctest-all\tskip\t0\n' >>"$dir/steps.tsv"
  say "== ctest-all: skipped (--cpu-smoke; TFT_SMOKE_CTEST=1 runs it)"
fi
nvidia-smi --query-gpu=name,memory.used,memory.total,temperature.gpu --format=csv >"$dir/nvidia-smi-after.txt" 2>&1

# --- g. summary -----------------------------------------------------------------------------
{
  echo "# bench/gpu/run.sh $mode: $1"
  echo
  echo "- machine: $gpu_name; $(head -1 "$dir/env.txt" 2>/dev/null | sed 's/^# //')"
  echo "- torch (version, CUDA, available): $(sed -n '/^## torch/{n;p;}' "$dir/env.txt" 2>/dev/null)"
  echo "- $(sed -n 's/^# git: /commit /p' "$dir/env.txt" 2>/dev/null); total $((SECONDS - start)) s"
  echo
  echo "| step | rc | seconds |"
  echo "|---|---|---|"
  tail -n +2 "$dir/steps.tsv" | while IFS=$'\t' read -r s r t; do echo "| $s | $r | $t |"; done
  echo
  for f in ctest-cuda ctest-all; do
    [[ -f "$dir/$f.log" ]] || continue
    echo "**$f**: $(grep -E 'tests passed|No tests were found' "$dir/$f.log" | tail -1)"
    grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Not Run|Subprocess aborted|Exception)' "$dir/$f.log" | sed 's/^/    /'
    echo
  done
  [[ -s "$dir/build-errors.txt" ]] && { echo "**build errors** (first 20):"; echo '```'; cat "$dir/build-errors.txt"; echo '```'; echo; }
  echo "## Comparison"
  echo
  if [[ -s "$dir/comparison.md" ]]; then cat "$dir/comparison.md"; else echo "(none: see the ours-*/peer-* logs)"; fi
  if [[ -f "$dir/memory-budget.md" ]]; then
    echo; echo "## tft-bench --memory-budget sweep:6"; echo; cat "$dir/memory-budget.md"
    grep -E "^memory budgets:" "$dir/memory-budget.log"
  fi
  for label in "${labels[@]}"; do
    [[ -f "$dir/ours-$label.md" ]] || continue
    echo; echo "## tft-bench: ours-$label"; echo; cat "$dir/ours-$label.md"
  done
} >"$dir/summary.md"
cat "$dir/summary.md"
echo
echo "results in $dir"
