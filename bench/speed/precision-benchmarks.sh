#!/usr/bin/env bash
# The "Mixed precision" section of BENCHMARKS.md, from fresh runs: tft-bench and the peer
# (bench/peer/peer_bench.py) at --precision 32 and bf16-mixed, back to back, on the reference
# configuration (every core) and the host-bound one (one thread), JSON into
# bench/results/precision-<config>-<tool>-<precision>.json, compared by
# bench/speed/precision-comparison.py; then the q-risk of the example configs trained at each
# precision (bench/accuracy/example_accuracy.py, 3 seeds, about 30 minutes).
# Prints the section (Markdown) on stdout; bench/run-benchmarks.sh puts it into BENCHMARKS.md.
#   bench/speed/precision-benchmarks.sh [--skip-accuracy] [--update BENCHMARKS.md] [extra tft-bench flags]
# --skip-accuracy: don't retrain, render bench/results/example-accuracy-precision.json as it is.
# --update FILE: instead of printing, replace the text between <!-- precision:begin --> and
#   <!-- precision:end --> in FILE with the section (the markers are added at the end of its
#   "Against pytorch-forecasting" section if absent), so the section can be regenerated alone.
# Builds ./build/bin/tft-bench and ./build/bin/tft-train first (fresh_tools.sh); the peer's
# Python comes from bench/peer/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

skip_accuracy=0
update=""
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-accuracy) skip_accuracy=1; shift ;;
    --update)
      [ $# -ge 2 ] || { echo "precision-benchmarks: --update needs a file" >&2; exit 2; }
      update=$2; shift 2 ;;
    --update=*) update=${1#--update=}; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
if [ -n "$update" ] && [ ! -f "$update" ]; then
  echo "precision-benchmarks: $update: no such file" >&2
  exit 2
fi

tft_bench=./build/bin/tft-bench
tft_train=./build/bin/tft-train
source bench/speed/fresh_tools.sh
build_fresh tft-bench tft-train
peer_python=$(bench/peer/setup.sh | tail -n 1)
mkdir -p bench/results
threads=$(nproc)
precisions=(32 bf16-mixed)

# One configuration: tft-bench, then the peer, at each precision in turn. Fills commands[].
commands=()
run_config() {
  local name=$1 config=$2 config_threads=$3 steps=$4 warmup=$5
  shift 5
  local precision ours_cmd peer_cmd
  for precision in "${precisions[@]}"; do
    ours_cmd=("$tft_bench" --config "$config" --strategies none,full --steps "$steps"
              --warmup "$warmup" --threads "$config_threads" --precision "$precision"
              --json "bench/results/precision-$name-tftrain-$precision.json" "$@")
    peer_cmd=("$peer_python" bench/peer/peer_bench.py --config "$config" --strategies none
              --steps "$steps" --warmup "$warmup" --threads "$config_threads"
              --precision "$precision" --count-flops
              --json "bench/results/precision-$name-peer-$precision.json")
    echo "precision-benchmarks: $name, tftrain $precision ..." >&2
    "${ours_cmd[@]}" >&2
    echo "precision-benchmarks: $name, peer $precision ..." >&2
    "${peer_cmd[@]}" >&2
    commands+=("\`${ours_cmd[*]}\`" "\`${peer_cmd[*]/#$peer_python/python}\`")
  done
}

reference_config=bench/configs/reference.yaml
host_config=bench/configs/host-bound.yaml
run_config reference "$reference_config" "$threads" 5 1 "$@"
run_config host-bound "$host_config" 1 10 2 "$@"

# Validation q-risk of the example configs trained at each precision, three seeds each.
accuracy_json=bench/results/example-accuracy-precision.json
accuracy_cmd=(python3 bench/accuracy/example_accuracy.py "$tft_train" build/example-accuracy-precision
              --config examples/configs/sp500.yaml --config examples/configs/multiseries.yaml
              --variant "32=--precision 32" --variant "bf16-mixed=--precision bf16-mixed"
              --seeds 1,2,3 --threads 1 --json "$accuracy_json")
if [ "$skip_accuracy" = 0 ]; then
  echo "precision-benchmarks: training the example configs (about 30 minutes) ..." >&2
  "${accuracy_cmd[@]}" >&2
elif [ ! -f "$accuracy_json" ]; then
  echo "precision-benchmarks: --skip-accuracy, but $accuracy_json does not exist" >&2
  exit 1
fi

# example_accuracy.py's seed table, from its JSON (it prints the table only after training).
accuracy_table() {
  python3 - "$1" <<'EOF'
import json
import sys

sys.dont_write_bytecode = True  # no bench/__pycache__ left behind
sys.path.insert(0, "bench/accuracy")
from example_accuracy import seeds_markdown

with open(sys.argv[1]) as f:
    run = json.load(f)
if "statistics" not in run:
    sys.exit(f"{sys.argv[1]}: no per-seed statistics (made without --seeds)")
labels = list(next(iter(run["results"].values())))
print(seeds_markdown(run["statistics"], labels))
EOF
}

# The words of a command as one would type them: single quotes only where needed.
shell_words() {
  local word line=""
  for word in "$@"; do
    if [[ $word =~ ^[A-Za-z0-9_./,=:+-]+$ ]]; then
      line+="$word "
    else
      line+="'${word//\'/\'\\\'\'}' "
    fi
  done
  echo "${line% }"
}

results() { echo "bench/results/precision-$1-$2-$3.json"; }
section() {
  echo "## Mixed precision"
  echo
  echo "Generated by \`bench/speed/precision-benchmarks.sh\` on $(date -u +%Y-%m-%d); do not edit by hand."
  echo
  echo "\`--precision bf16-mixed\` (docs/config.md, Mixed precision) runs the forward pass and the"
  echo "loss under autocast: the matrix products and the LSTMs in bfloat16, softmax, norm"
  echo "statistics and the loss in float32, while the weights, the gradients and Adam's state stay"
  echo "float32. The peer runs the same way, as Lightning's \`Trainer(precision=\"bf16-mixed\")\`"
  echo "does (\`torch.autocast\` around the forward and the loss). Each table comes from one run of"
  echo "each tool at each precision, back to back (tftrain, then the peer, float32 first), so the"
  echo "ratios compare runs minutes apart on the same machine. FLOPs per step are counted in one"
  echo "extra, untimed step: by tft-bench's RecordFunction counter (matrix products at 2mnk, the"
  echo "LSTM by shape), and for the peer by \`torch.utils.flop_counter\` plus the same LSTM"
  echo "formula (\`--count-flops\`). The GEMM peaks are square products timed by tft-bench in the"
  echo "same run; \`full\`'s FLOPs include its recomputation."
  echo
  python3 bench/speed/precision-comparison.py \
    "$(results reference tftrain 32)" "$(results reference tftrain bf16-mixed)" \
    "$(results reference peer 32)" "$(results reference peer bf16-mixed)" \
    --title "reference ($reference_config, $threads threads)"
  echo
  python3 bench/speed/precision-comparison.py \
    "$(results host-bound tftrain 32)" "$(results host-bound tftrain bf16-mixed)" \
    "$(results host-bound peer 32)" "$(results host-bound peer bf16-mixed)" \
    --title "host-bound ($host_config, 1 thread)"
  echo
  local joined
  joined=$(printf '%s; ' "${commands[@]}")
  echo "Commands: ${joined%; }."
  echo
  echo "### Quality"
  echo
  echo "Validation q-risk of the saved model after training each example config at float32 and"
  echo "at bf16-mixed (its own epochs, early stopping and checkpointing, one thread) with seeds 1,"
  echo "2 and 3 (\`--seed\`): whether bf16-mixed's mean lands within float32's seed-to-seed range."
  echo "Train seconds include validation after each epoch; the activation peak is the largest"
  echo "step's, measured during training."
  echo
  accuracy_table "$accuracy_json"
  echo
  echo "Command: \`$(shell_words "${accuracy_cmd[@]}")\`."
}

if [ -z "$update" ]; then
  section
  exit 0
fi

new_section=$(mktemp)
trap 'rm -f "$new_section"' EXIT
section > "$new_section"
python3 bench/marked_section.py "$update" precision "$new_section" \
  --end-of "## Against pytorch-forecasting"
echo "precision-benchmarks: updated $update" >&2
