#!/usr/bin/env bash
# Regenerates BENCHMARKS.md (and bench/results/*) from fresh runs, on the default LibTorch (the
# pinned PyPI wheel): tft-bench on the reference configuration (every checkpointing strategy,
# memory budgets) and on the host-bound one, each followed by the peer, pytorch-forecasting's own TFT on the
# same torch version and shapes (bench/peer/). Numbers in BENCHMARKS.md come from here only;
# don't hand-edit them.
#   bench/run-benchmarks.sh [extra tft-bench flags]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(./scripts/setup-deps.sh | tail -n 1)
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake -S . -B build -G Ninja -DTFT_TORCH_PREFIX="$prefix" >/dev/null
cmake --build build -j "${JOBS:-$(nproc)}" --target tft-bench tft-kernel-bench tft-train tft-read-bench
peer_python=$(bench/peer/setup.sh | tail -n 1)
mkdir -p bench/results
threads=$(nproc)

config=bench/configs/reference.yaml
strategies="none,full,unit:static_encoder,unit:historical_encoder,unit:future_encoder,unit:lstm_encoder,unit:lstm_decoder,unit:attention_0,uniform:2,selective:1,3,dynamic:0.25,dynamic:0.35,dynamic:0.5,dynamic:0.75"
cmd=(./build/bin/tft-bench --config "$config" --strategies "$strategies" --steps 5 --warmup 1
     --threads "$threads" --json bench/results/reference.json --chart bench/results/reference.svg
     --markdown bench/results/reference-table.md "$@")
log=$("${cmd[@]}" 2>/dev/null)
echo "$log"
peer_cmd=("$peer_python" bench/peer/peer_bench.py --config "$config" --strategies none,naive
          --steps 5 --warmup 1 --threads "$threads" --json bench/results/reference-peer.json)
"${peer_cmd[@]}" 2>/dev/null

# Compressed checkpoint boundaries: full against full+bf16 and full+int8, at the reference's
# chunks and in finer ones (where the boundaries, not one segment's recompute, set the peak),
# then the q-risk of the example configs trained with each (below, with QAT).
boundary_strategies=none,full,full+bf16,full+int8
boundary_cmd=(./build/bin/tft-bench --config "$config" --strategies "$boundary_strategies" --steps 10
              --warmup 1 --threads "$threads" --json bench/results/boundary-compression.json
              --markdown bench/results/boundary-compression-table.md "$@")
"${boundary_cmd[@]}" >/dev/null 2>&1
fine_config=bench/configs/reference-fine-chunks.yaml
boundary_fine_cmd=(./build/bin/tft-bench --config "$fine_config" --strategies "$boundary_strategies"
                   --steps 10 --warmup 1 --threads "$threads"
                   --json bench/results/boundary-compression-fine-chunks.json
                   --markdown bench/results/boundary-compression-fine-chunks-table.md "$@")
"${boundary_fine_cmd[@]}" >/dev/null 2>&1
# Memory budgets (checkpoint.memory_budget): a sweep planned and timed beside the fixed
# strategies, a budget below every plan and the batch size it names; its own section,
# regenerated alone by `bench/speed/memory-budget-benchmarks.sh --update BENCHMARKS.md`.
memory_budget_section=$(bench/speed/memory-budget-benchmarks.sh "$@")
# Operator calls and host syncs per training step beside the peer's (issue 40); regenerated
# alone by `bench/speed/operator-calls.sh --update BENCHMARKS.md`.
operator_calls_section=$(bench/speed/operator-calls.sh)
# The step's point-wise kernels alone against ATen's operators (issue 40); regenerated alone by
# `bench/speed/kernels.sh --update BENCHMARKS.md`.
kernels_section=$(bench/speed/kernels.sh)
# The same work alone and beside a CPU-bound neighbour (issue 43); regenerated alone by
# `bench/speed/contention.sh --update BENCHMARKS.md`.
contention_section=$(bench/speed/contention.sh)
# The example configs trained with every unit checkpointed: float32 boundaries (the
# reference), bfloat16 and int8 boundaries, quantization-aware training, and float32 with
# another seed (how far two runs land apart on the seed alone).
every_unit='--set "checkpoint={strategy: uniform, interval: 1}"'
accuracy_cmd=(python3 bench/accuracy/example_accuracy.py ./build/bin/tft-train build/example-accuracy
              --config examples/configs/sp500.yaml --config examples/configs/multiseries.yaml
              --threads 1 --json bench/results/example-accuracy.json
              --variant "float32=$every_unit"
              --variant "bfloat16=$every_unit --set checkpoint.boundary_dtype=bfloat16"
              --variant "int8=$every_unit --set checkpoint.boundary_dtype=int8"
              --variant "qat=$every_unit --use-qat"
              --variant "another seed=$every_unit --seed 1234")
accuracy_table=$("${accuracy_cmd[@]}")

# The host-bound shape: one thread, as a GPU's host side runs the step.
host_config=bench/configs/host-bound.yaml
host_cmd=(./build/bin/tft-bench --config "$host_config" --strategies none,full --steps 10
          --warmup 2 --threads 1 --json bench/results/host-bound.json "$@")
"${host_cmd[@]}" 2>/dev/null
host_peer_cmd=("$peer_python" bench/peer/peer_bench.py --config "$host_config"
               --strategies none,naive --steps 10 --warmup 2 --threads 1
               --json bench/results/host-bound-peer.json)
"${host_peer_cmd[@]}" 2>/dev/null

# Mixed precision: both tools at 32 and bf16-mixed on both shapes, and the example configs
# trained at each precision. `bench/speed/precision-benchmarks.sh --update BENCHMARKS.md` regenerates
# this section alone, between its markers.
precision_section=$(bench/speed/precision-benchmarks.sh "$@")

# Data parallelism: tft-train as one process and as two local ranks, one thread each.
dp_cmd=(python3 bench/speed/data-parallel.py ./build/bin/tft-train examples/configs/sp500.yaml --nproc 2
        --epochs 3 --json bench/results/data-parallel.json)
dp_table=$("${dp_cmd[@]}")

# Reading 10^7 rows, CSV against Parquet (the files go to build/, 550 MB).
arrow_python=$(sed -n 's/^TFT_ARROW_PYTHON:FILEPATH=//p' build/CMakeCache.txt)
read_cmd=("$arrow_python" bench/data_reading/data_reading.py ./build/bin/tft-read-bench
          build/data-reading --json bench/results/data-reading.json)
read_table=$("${read_cmd[@]}")

# Accuracy on public data (about 20 minutes more) is not rerun here: its section, between its
# markers, is kept as it is. `python3 bench/accuracy/example_accuracy.py ./build/bin/tft-train
# build/public-accuracy --public --json bench/results/public-accuracy.json --update BENCHMARKS.md`
# regenerates it alone (see bench/accuracy/public_accuracy.py).
public_accuracy_section=$(sed -n '/^<!-- public-accuracy:begin -->$/,/^<!-- public-accuracy:end -->$/p' \
                          BENCHMARKS.md 2>/dev/null || true)
# The cold build (two builds of tft-train from nothing, about 9 minutes) is kept as it is too;
# `bench/speed/build-time.sh --update BENCHMARKS.md` regenerates it alone.
build_time_section=$(sed -n '/^<!-- build-time:begin -->$/,/^<!-- build-time:end -->$/p' \
                     BENCHMARKS.md 2>/dev/null || true)

torch_version=$("$peer_python" -c 'import importlib.metadata as m; print(m.version("torch"))')
{
  echo "# Benchmarks"
  echo
  echo "Generated by \`bench/run-benchmarks.sh\` on $(date -u +%Y-%m-%d); do not edit by hand."
  echo
  echo "- Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; CPU only"
  echo "- LibTorch $torch_version (the PyPI wheel), for tftrain and the peer alike"
  echo
  echo "## Against pytorch-forecasting"
  echo
  echo "The peer is pytorch-forecasting's own \`TemporalFusionTransformer\` on the same torch, the"
  echo "same shapes and the same kind of step (forward, quantile loss, backward, Adam), measured"
  echo "right after tftrain by \`bench/peer/peer_bench.py\`; its \`naive\` strategy wraps the same"
  echo "six units in \`torch.utils.checkpoint\` (see \`bench/peer/README.md\`)."
  echo
  python3 bench/speed/peer-comparison.py bench/results/reference.json bench/results/reference-peer.json \
    --title "reference ($config, $threads threads)"
  echo
  python3 bench/speed/peer-comparison.py bench/results/host-bound.json bench/results/host-bound-peer.json \
    --title "host-bound ($host_config, 1 thread)"
  echo
  echo "Commands: \`${cmd[*]}\`, then \`${peer_cmd[*]/#$peer_python/python}\`;"
  echo "\`${host_cmd[*]}\`, then \`${host_peer_cmd[*]/#$peer_python/python}\`."
  echo
  echo "<!-- precision:begin -->"
  echo "$precision_section"
  echo "<!-- precision:end -->"
  echo
  echo "## Data parallelism (two local ranks)"
  echo
  echo "\`tft-train\` on \`examples/configs/sp500.yaml\` (batch 64 per rank, 3 epochs, medians of"
  echo "epochs 2-3) as one process and as two ranks (\`--nproc 2\`: c10d, Gloo over loopback), one"
  echo "intra-op thread per process. Two ranks take 2 x 64 windows per step, so they make half the"
  echo "steps; all-reduce is the time each step spends averaging gradients."
  echo
  echo "$dp_table"
  echo
  echo "Command: \`${dp_cmd[*]}\`."
  echo
  echo "## Reading data: CSV and Parquet"
  echo
  echo "\`tft-read-bench\` loads one file into a dataset (read, group, split, fit scalers and"
  echo "encoders, list windows: \`TimeSeriesDataset::load\`) in a process of its own: 1,000 series x"
  echo "10,000 days (store, day, price, promo, sales), as CSV and as Parquet (pyarrow's defaults:"
  echo "row groups of 1 Mi rows, Snappy, the store dictionary-encoded). Medians of 3 runs each,"
  echo "formats alternating; peak RSS is the process's high-water mark (VmHWM). The CSV reader"
  echo "holds the file's text while it parses; the Parquet reader decodes one record batch (65,536"
  echo "rows) of the named columns at a time, so its peak is the dataset plus a row group's buffers."
  echo
  echo "$read_table"
  echo
  echo "Command: \`${read_cmd[*]/#$arrow_python/python}\`."
  echo
  echo "## Checkpointing strategies (reference configuration)"
  echo
  echo "Configuration: \`$config\` (hidden 160, 4 heads, encoder 168, horizon 24, batch 64, 1 LSTM"
  echo "layer, 1 decoder layer, 2 static categoricals, 3 known reals, 5 unknown reals)."
  echo "Peak activation memory is the tracking allocator's peak during forward + backward minus"
  echo "the bytes held before the step. Overheads and savings are measured against \`none\` in the"
  echo "same run (steps interleaved across strategies); the seed formulas' predictions stand beside"
  echo "them. The gradient columns compare the first step's gradients with \`none\`: since issue 40 a"
  echo "unit that recomputes nothing runs whole and a checkpointed unit's chunks draw their own"
  echo "dropout masks, so they compare two draws; with \`tft-bench --bitwise\` (every unit in its"
  echo "chunks) they must be 0."
  echo
  cat bench/results/reference-table.md
  echo
  echo '```'
  echo "$log" | grep -E "physical floor|x the floor|planned for" || true
  echo '```'
  echo
  echo "![memory saved vs step-time overhead](bench/results/reference.svg)"
  echo
  echo "## Compressed checkpoint boundaries"
  echo
  echo "\`checkpoint.boundary_dtype\` (docs/config.md): every unit checkpointed, its segments' inputs"
  echo "kept as float32 (\`full\`), bfloat16 (\`full+bf16\`) or int8 with a float scale per channel"
  echo "(\`full+int8\`). The last column is the first step's relative L2 gradient error against"
  echo "\`none\` (0 for float32, which stays bitwise). At the reference's chunks the step's peak is"
  echo "the recompute and backward of one \`historical_encoder\` chunk (its inputs are batch data,"
  echo "never compressed) on top of about 13.5 MiB of boundaries and gradients, so no dtype moves"
  echo "it. In finer chunks (\`$fine_config\`: 32 historical, 8 attention chunks) the segments"
  echo "are small enough for the boundaries to matter. Savings there are against that config's own"
  echo "\`none\`, whose peak is higher. A tensor is compressed once per forward pass, but every query"
  echo "chunk's recompute decompresses each key and value piece it attends to, into float32 copies"
  echo "held until its backward ends: that is why bfloat16 barely moves the peak."
  echo
  cat bench/results/boundary-compression-table.md
  echo
  cat bench/results/boundary-compression-fine-chunks-table.md
  echo
  echo "Commands: \`${boundary_cmd[*]}\`; \`${boundary_fine_cmd[*]}\`."
  echo
  echo "<!-- memory-budget:begin -->"
  echo "$memory_budget_section"
  echo "<!-- memory-budget:end -->"
  echo
  echo "<!-- kernels:begin -->"
  echo "$kernels_section"
  echo "<!-- kernels:end -->"
  echo
  echo "<!-- contention:begin -->"
  echo "$contention_section"
  echo "<!-- contention:end -->"
  echo
  echo "<!-- operator-calls:begin -->"
  echo "$operator_calls_section"
  echo "<!-- operator-calls:end -->"
  echo
  echo "## Training the example configs: compressed boundaries and QAT"
  echo
  echo "Validation q-risk of the saved model after training each example config (its own seed,"
  echo "epochs and early stopping, one thread) with every unit checkpointed: float32 boundaries"
  echo "(the reference of the relative columns), bfloat16 and int8 boundaries"
  echo "(\`checkpoint.boundary_dtype\`), quantization-aware training (\`training.qat\`, float32"
  echo "boundaries), and float32 with another seed: how far two runs land apart on the seed alone,"
  echo "the scale to read the other differences against. Train seconds include validation after"
  echo "each epoch; the activation peak is the largest step's, measured during training."
  echo
  echo "$accuracy_table"
  echo
  echo "Command: \`$(printf '%q ' "${accuracy_cmd[@]}" | sed 's/ $//')\`."
  if [ -n "$public_accuracy_section" ]; then
    echo
    echo "$public_accuracy_section"
  fi
  if [ -n "$build_time_section" ]; then
    echo
    echo "$build_time_section"
  fi
} > BENCHMARKS.md.new
# The file is written whole: a section this script does not make (one that another script or a
# note added since) would be lost. Then BENCHMARKS.md stays as it was (bench/kept_sections.py).
if [ -f BENCHMARKS.md ] && ! python3 bench/kept_sections.py BENCHMARKS.md BENCHMARKS.md.new; then
  echo "run-benchmarks: BENCHMARKS.md left as it was; the runs' sections are in BENCHMARKS.md.new" \
       "(move them in by hand, or regenerate each with its own script's --update)" >&2
  exit 1
fi
mv BENCHMARKS.md.new BENCHMARKS.md
echo "wrote BENCHMARKS.md"
