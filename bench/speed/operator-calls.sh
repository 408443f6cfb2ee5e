#!/usr/bin/env bash
# The "Operator calls per training step" section of BENCHMARKS.md (issue 40), from fresh runs:
# tft-bench and the peer (bench/peer/peer_bench.py --count-ops) on the reference configuration
# (2 threads) and the host-bound one (1 thread). tft-bench runs twice: in its default partition
# (units that recompute nothing run whole), with a memory budget beside none and full, and with --bitwise (every unit in its chunks, the old partition). JSON and the
# printed tables go to bench/results/operator-calls-<config>-<run>.{json,txt}.
#   bench/speed/operator-calls.sh [--skip-runs] [--update BENCHMARKS.md]
# --skip-runs: render the section from the files of an earlier run.
# --update FILE: replace the text between <!-- operator-calls:begin --> and
#   <!-- operator-calls:end --> in FILE (added at its end if absent) instead of printing.
# Builds ./build/bin/tft-bench first (fresh_tools.sh); the peer's Python comes from bench/peer/setup.sh
# ($PEER_PYTHON, default ~/.cache/tftrain/venv-peer/bin/python).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/speed/section_args.sh operator-calls "$@"
source bench/speed/fresh_tools.sh
tft_bench=./build/bin/tft-bench
peer_python=${PEER_PYTHON:-$HOME/.cache/tftrain/venv-peer/bin/python}
out=bench/results
configs=("reference 2 5 122.9MiB" "host-bound 1 10 2.8MiB")  # name threads steps budget
# Budgets: 30% of none's measured activation peak on the reference (409.5 MiB at 7a1ef9a); 40% of
# the host-bound one's 7.1 MiB, since its default chunks (ModelConfig::min_chunk_elements) put
# full's peak at 2.4 MiB, 34%.

measure() {  # measure NAME THREADS STEPS BUDGET
  local name=$1 threads=$2 steps=$3 budget=$4 config=bench/configs/$1.yaml
  "$tft_bench" --config "$config" --strategies none,full --steps "$steps" --warmup 1 \
    --threads "$threads" --memory-budget "$budget" \
    --json "$out/operator-calls-$name-tftrain.json" >"$out/operator-calls-$name-tftrain.txt"
  "$tft_bench" --config "$config" --strategies none,full --steps "$steps" --warmup 1 \
    --threads "$threads" --bitwise --json "$out/operator-calls-$name-tftrain-bitwise.json" \
    >"$out/operator-calls-$name-tftrain-bitwise.txt"
  "$peer_python" bench/peer/peer_bench.py --config "$config" --strategies none \
    --steps "$steps" --warmup 1 --threads "$threads" --count-ops \
    --json "$out/operator-calls-$name-peer.json" >"$out/operator-calls-$name-peer.txt" 2>&1
}
if ((skip_runs == 0)); then
  build_fresh tft-bench
  [ -x "$peer_python" ] || { echo "operator-calls: no $peer_python (bench/peer/setup.sh)" >&2; exit 1; }
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2086
    measure $c
  done
fi

section=$(mktemp)
trap 'rm -f "$section"' EXIT
{
  echo "## Operator calls per training step (issue 40)"
  echo
  echo "Each ATen operator call is a kernel launch on a GPU and host time everywhere; a host"
  echo "sync (a value read back) stalls a GPU. Both are counted in one un-timed step: forward,"
  echo "quantile loss, backward and Adam (\`src/common/operator_counter.h\`; the peer by"
  echo "\`peer_bench.py --count-ops\`, the same rule over torch.profiler's events). The peer's"
  echo "\"host syncs\" are torch.optim.Adam reading each parameter's step counter, which stays on"
  echo "the CPU on a GPU too. Step times are separate processes run back to back (the machine's"
  echo "times move by up to 15% between runs); the counts are exact. On a CUDA device both sides"
  echo "also count the kernels the step ran (\`src/common/device_kernel_counter.h\`, the same rule"
  echo "for the peer; \`bench/gpu/README.md\`); a CPU runs none, so the tables here have no such"
  echo "column."
  for c in "${configs[@]}"; do
    read -r name threads _ _ <<<"$c"
    echo
    python3 bench/speed/peer-comparison.py "$out/operator-calls-$name-tftrain.json" \
      "$out/operator-calls-$name-peer.json" --title "$name, $threads thread(s)"
    echo
    echo "By phase, and every unit in its chunks (\`--bitwise\`, the partition before issue 40):"
    echo
    python3 - "$out/operator-calls-$name-tftrain.json" \
      "$out/operator-calls-$name-tftrain-bitwise.json" "$out/operator-calls-$name-peer.json" <<'PY'
import json, sys
rows = []
for path, partition in zip(sys.argv[1:], ("units whole", "every unit in chunks", "")):
    doc = json.load(open(path))
    for r in doc["results"]:
        who = "pytorch-forecasting" if "peer" in doc else "tftrain"
        label = f"{who} `{r['strategy']}`" + (f", {partition}" if partition else "")
        by = r["op_calls_by_phase"]
        rows.append((label, r["op_calls"], by["forward"], by["loss"], by["backward"],
                     by["optimizer"], r["step_seconds_median"] * 1e3,
                     r["peak_activation_bytes"] / 2**20))
print("| run | operator calls | forward | loss | backward | optimizer | step ms | peak MiB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for row in rows:
    print("| {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} |".format(*row))
PY
  done
  echo
  echo "Commands: \`bench/speed/operator-calls.sh\` runs, for each config, \`./build/bin/tft-bench"
  echo "--config bench/configs/NAME.yaml --strategies none,full --memory-budget BUDGET --json ...\`,"
  echo "the same with \`--bitwise\`, and \`python bench/peer/peer_bench.py --config ..."
  echo "--strategies none --count-ops --json ...\`; the budgets are 30% and 40% of \`none\`'s peak"
  budgets=()
  for c in "${configs[@]}"; do read -r _ _ _ budget <<<"$c"; budgets+=("${budget%MiB} MiB"); done
  echo "(${budgets[0]} and ${budgets[1]})."
} >"$section"
emit_section "$section"
