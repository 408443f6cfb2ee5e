#!/usr/bin/env bash
# The nightly refit (docs/refit.md) on the S&P 500 example: "yesterday" the file lacked its last
# 10% of rows and a model was trained on it; "today" the rows are there, and the model is
# refitted on the whole file, starting from yesterday's weights, instead of trained from scratch.
#
#   ./examples/refit.sh [TFT_TRAIN [OUT_DIR]]
#
# TFT_TRAIN defaults to build/bin/tft-train (./scripts/run-example.sh builds it); OUT_DIR to
# build/runs/refit. Prints both runs' q-risk and training time.
set -euo pipefail
cd "$(dirname "$0")/.."
tft_train=${1:-build/bin/tft-train}
out=${2:-build/runs/refit}
config=examples/configs/sp500.yaml
mkdir -p "$out"

# Yesterday's file: every row but the last 10% (the header stays).
rows=$(($(wc -l < examples/data/sp500-2000.csv) - 1))
head -n $((1 + rows - rows / 10)) examples/data/sp500-2000.csv > "$out/sp500-yesterday.csv"

"$tft_train" --config "$config" --data "$out/sp500-yesterday.csv" --output "$out/yesterday" \
  > "$out/yesterday.txt"
# Today: the whole file, from yesterday's model, for 2 epochs (BENCHMARKS.md, "Refit and backtest":
# on sp500 that matched training from scratch in 18% of its time).
"$tft_train" --config "$config" --init-from "$out/yesterday/model" --output "$out/today" \
  --epochs 2 > "$out/today.txt"

for run in yesterday today; do
  echo "== $run =="
  grep -E "started from|q-risk P50|naive forecast|training time" "$out/$run.txt"
done
