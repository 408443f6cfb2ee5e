#!/usr/bin/env bash
# The "Operator calls" section of BENCHMARKS.md, from fresh runs: tft-bench and the peer
# (bench/peer/peer_bench.py --count-ops) on the reference configuration (2 threads) and the
# host-bound one (1 thread); tft-bench with its default partition (units that recompute nothing
# run whole, and a memory budget of 30% of none's peak) and with --bitwise (every unit in its
# chunks), JSON into bench/results/operator-calls-<config>-<run>.json.
#   bench/operator-calls.sh
# Assumes ./build/bin/tft-bench is built; the peer's Python comes from bench/peer/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
tft_bench=./build/bin/tft-bench
peer_python=${PEER_PYTHON:-$HOME/.cache/tftrain/venv-peer/bin/python}
[ -x "$tft_bench" ] || { echo "operator-calls: $tft_bench is not built" >&2; exit 1; }
[ -x "$peer_python" ] || { echo "operator-calls: no $peer_python (bench/peer/setup.sh)" >&2; exit 1; }
out=bench/results
run() {  # run CONFIG THREADS STEPS BUDGET
  local config=$1 threads=$2 steps=$3 budget=$4 name
  name=$(basename "$config" .yaml)
  "$tft_bench" --config "$config" --strategies none,full --steps "$steps" --warmup 1 \
    --threads "$threads" --memory-budget "$budget" \
    --json "$out/operator-calls-$name-tftrain.json" >"$out/operator-calls-$name-tftrain.txt"
  "$tft_bench" --config "$config" --strategies none,full --steps "$steps" --warmup 1 \
    --threads "$threads" --bitwise \
    --json "$out/operator-calls-$name-tftrain-bitwise.json" \
    >"$out/operator-calls-$name-tftrain-bitwise.txt"
  "$peer_python" bench/peer/peer_bench.py --config "$config" --strategies none \
    --steps "$steps" --warmup 1 --threads "$threads" --count-ops \
    --json "$out/operator-calls-$name-peer.json" >"$out/operator-calls-$name-peer.txt" 2>&1
  python3 bench/peer-comparison.py "$out/operator-calls-$name-tftrain.json" \
    "$out/operator-calls-$name-peer.json" --title "$name, $threads threads"
}
# Budgets: 30% of none's measured activation peak (reference 833.6 MiB, host-bound 12.3 MiB).
run bench/configs/reference.yaml 2 5 250MiB
run bench/configs/host-bound.yaml 1 10 3.7MiB
