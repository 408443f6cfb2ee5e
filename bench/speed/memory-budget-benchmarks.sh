#!/usr/bin/env bash
# The "Memory budgets" section of BENCHMARKS.md (checkpoint.memory_budget, issue 32), from fresh
# runs on the reference configuration, one intra-op thread (on a shared machine its ratios
# repeat; two threads' step times scattered 1x to 5x for the same work):
#   1. tft-bench --memory-budget sweep:7 beside twelve fixed strategies, in one run:
#      bench/results/memory-budget.json and memory-budget-table.md;
#   2. a budget below every plan (50MiB), then the reference at the batch size its message
#      names, under the same budget;
#   3. tft-train on examples/configs/multiseries.yaml with a budget below every plan (4MiB):
#      its exit code and line, then one epoch at the batch size it names.
# The planner's lines and the outcomes of 2 and 3 go to bench/results/memory-budget-log.txt.
# Prints the section (Markdown) on stdout; bench/run-benchmarks.sh puts it into BENCHMARKS.md.
#   bench/speed/memory-budget-benchmarks.sh [--no-run] [--update BENCHMARKS.md] [extra tft-bench flags]
# --no-run: render the section from the files of the last run.
# --update FILE: instead of printing, replace the text between <!-- memory-budget:begin --> and
#   <!-- memory-budget:end --> in FILE (the markers go before its "## Training the example
#   configs" section if absent).
# Builds ./build/bin/tft-bench and ./build/bin/tft-train first (fresh_tools.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

run=1
update=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-run) run=0; shift ;;
    --update)
      [ $# -ge 2 ] || { echo "memory-budget-benchmarks: --update needs a file" >&2; exit 2; }
      update=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done

config=bench/configs/reference.yaml
strategies=none,full,full+bf16,full+int8,unit:static_encoder,unit:historical_encoder,unit:future_encoder,unit:lstm_encoder,unit:lstm_decoder,unit:attention_0,uniform:2,selective:1,3
sweep_cmd=(./build/bin/tft-bench --config "$config" --strategies "$strategies"
           --memory-budget sweep:7 --steps 5 --warmup 1 --threads 1
           --json bench/results/memory-budget.json --markdown bench/results/memory-budget-table.md
           "$@")
unfit_budget=50MiB
unfit_cmd=(./build/bin/tft-bench --config "$config" --strategies none
           --memory-budget "$unfit_budget" --steps 2 --warmup 1 --threads 1)
train_config=examples/configs/multiseries.yaml
train_budget=4MiB
train_cmd=(./build/bin/tft-train --config "$train_config" --epochs 1 --threads 1
           --set "checkpoint={strategy: none}" --memory-budget "$train_budget")
log=bench/results/memory-budget-log.txt

# tft-bench's lines for a budget: its plan or why none fits (not its FLOP line).
plan_lines() { grep -E '^budget:[^ ]+: (budget |checkpoint\.memory_budget: )|^memory budgets:'; }
# The batch size a MemoryBudgetError line names ("...; batch_size 56 fits ...").
named_rows() { sed -nE 's/.*; batch_size ([0-9]+) fits.*/\1/p' | head -n 1; }

if ((run)); then
  source bench/speed/fresh_tools.sh
  build_fresh tft-bench tft-train
  mkdir -p bench/results build/memory-budget
  {
    echo "# the sweep's plans"
    "${sweep_cmd[@]}" 2>/dev/null | plan_lines
    echo "# $unfit_budget on $config"
    unfit=$("${unfit_cmd[@]}" 2>/dev/null | plan_lines | grep -v '^memory budgets:')
    echo "$unfit"
    rows=$(named_rows <<<"$unfit")
    if [ -n "$rows" ]; then
      smaller=build/memory-budget/reference-b$rows.yaml
      sed -E "s/^batch_size:.*/batch_size: $rows/" "$config" >"$smaller"
      echo "# $unfit_budget at batch_size $rows"
      "${unfit_cmd[@]/$config/$smaller}" 2>/dev/null | plan_lines
    fi
    echo "# tft-train $train_budget on $train_config"
    rm -rf build/memory-budget/train
    status=0
    line=$("${train_cmd[@]}" --output build/memory-budget/train/unfit 2>&1 >/dev/null) || status=$?
    echo "exit $status, output folder written: $([ -e build/memory-budget/train/unfit ] && echo yes || echo no)"
    echo "$line"
    rows=$(named_rows <<<"$line")
    if [ -n "$rows" ]; then
      status=0
      "${train_cmd[@]}" --output build/memory-budget/train/fit \
        --set "training.batch_size=$rows" >/dev/null 2>&1 || status=$?
      echo "# tft-train $train_budget at batch_size $rows: exit $status"
      python3 - build/memory-budget/train/fit/summary.json <<'PY'
import json, sys
memory = json.load(open(sys.argv[1]))["memory"]
plan = memory["plan"]
print(f"training peak {memory['peak_activation_bytes_training']} bytes, budget "
      f"{plan['memory_budget']['budget_bytes']} bytes, plan measured {plan['measured_peak_bytes']}")
PY
    fi
  } >"$log"
fi

section() {
  echo "## Memory budgets (issue 32)"
  echo
  echo "\`checkpoint.memory_budget\` (docs/config.md): the planner fits the step to a size instead"
  echo "of a strategy. Seven budgets evenly spaced from \`none\`'s peak down to \`full+int8\`'s (at"
  echo "the reference's chunks the same as \`full\`'s), each planned on its own copy of the model"
  echo "and timed in the same interleaved rounds as twelve fixed strategies, so each plan stands"
  echo "next to the fastest fixed strategy whose timed peak fits the same budget. One intra-op"
  echo "thread: on this shared machine two threads' step times scattered 1x to 5x for the same"
  echo "work within one run; with one the ratios repeat. The CPU-time columns are the process's"
  echo "CPU time, which other load disturbs less (the planner charges units in it on the CPU)."
  echo "\"planning / step\" divides planning's time by the timed steps' median, taken later; the"
  echo "planner's own figure (its time over the plan's step measured while planning) is in its"
  echo "lines below."
  echo
  python3 - bench/results/memory-budget.json "$log" <<'PY'
import json, re, sys
rows = [r for r in json.load(open(sys.argv[1]))["memory_budgets"] if not r["error"]]
sweep = open(sys.argv[2]).read().split("\n# ")[0]
own = [float(x) for x in re.findall(r"= ([0-9.]+) steps of", sweep)]
misses = sum(not r["fits"] for r in rows)
print(f"- **Peaks:** {len(rows)} budgets planned, {misses} over budget; margins "
      f"{min(r['budget_bytes'] - r['measured_peak_bytes'] for r in rows) / 2**20:.1f} to "
      f"{max(r['budget_bytes'] - r['measured_peak_bytes'] for r in rows) / 2**20:.1f} MiB; every "
      "timed peak equals the planner's measurement: "
      f"{'yes' if all(r['planned_peak_bytes'] == r['measured_peak_bytes'] for r in rows) else 'no'}.")
compared = [r for r in rows if r["fastest_fixed"]]
worst = max(compared, key=lambda r: r["ratio"])
print(f"- **Step time:** at most {worst['ratio']:.3f}x the fastest fixed strategy that fits "
      f"(CPU time: at most {max(r['cpu_ratio'] for r in compared):.3f}x), at "
      f"{worst['budget_bytes'] / 2**20:.1f} MiB against `{worst['fastest_fixed']}`; the lowest "
      f"{min(r['ratio'] for r in compared):.3f}x.")
print(f"- **Planning:** {min(own):.1f} to {max(own):.1f} steps of the plan by the planner's "
      f"own clock; {min(r['planning_steps'] for r in rows):.2f} to "
      f"{max(r['planning_steps'] for r in rows):.2f} timed steps of the plan "
      f"(CPU time {min(r['planning_cpu_steps'] for r in rows):.2f} to "
      f"{max(r['planning_cpu_steps'] for r in rows):.2f}).")
PY
  echo
  cat bench/results/memory-budget-table.md
  echo
  echo "The planner's lines, then a budget below every plan, and the batch size it names (tft-bench"
  echo "and tft-train; tft-train exits with 2 and writes nothing):"
  echo
  echo '```'
  sed -E 's/^budget:[0-9.]+MiB: //' "$log"
  echo '```'
  echo
  echo "Commands: \`bench/speed/memory-budget-benchmarks.sh\`: \`${sweep_cmd[*]}\`; \`${unfit_cmd[*]}\`,"
  echo "then with the batch size it names; \`${train_cmd[*]}\`, then with"
  echo "\`--set training.batch_size=N\`."
}

if [ -z "$update" ]; then
  section
  exit 0
fi
new_section=$(mktemp)
trap 'rm -f "$new_section"' EXIT
section >"$new_section"
python3 bench/marked_section.py "$update" memory-budget "$new_section" \
  --before "## Training the example configs"
echo "memory-budget-benchmarks: updated $update" >&2
