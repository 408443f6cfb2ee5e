// One row of tft-bench's results, and its outputs: the table, the JSON file, the chart.
#pragma once

#include "common/device_kernel_counter.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tft::bench {

struct BenchResult {
  std::string strategy;
  std::string summary;                // CheckpointConfig::summary()
  double step_seconds_median = 0;     // forward + backward + optimizer step
  double forward_seconds_median = 0;  // forward only
  std::int64_t peak_activation_bytes = 0;
  double memory_savings_measured = 0;    // 1 - peak / peak(none)
  double compute_overhead_measured = 0;  // step / step(none)
  double memory_savings_predicted = 0;   // the seed's formula
  double compute_overhead_predicted = 0;
  double grad_max_abs_diff = 0;  // first step's gradients against none
  // |g - g_none| / |g_none| over every parameter's gradient as one vector (L2 norms). With
  // --bitwise 0 unless the boundaries are compressed; without, a checkpointed unit's chunks
  // draw their own dropout masks, so this compares two draws (0 for none itself).
  double grad_relative_error = 0;
  double loss = 0;  // first step's loss
  // Counted in one un-timed step (flop_counter.h): matrix products at 2*m*n*k, the LSTM's
  // apart; recomputation counts, so `full` does more than `none`.
  double gemm_flops_per_step = 0;
  double lstm_flops_per_step = 0;
  double flops_per_step = 0;              // the two together
  double achieved_gflops_per_second = 0;  // flops_per_step / step_seconds_median
  double peak_fraction = 0;       // of the GEMM peak at the run's precision (bf16 for bf16-mixed)
  double fp32_peak_fraction = 0;  // of the float32 GEMM peak
  // Counted in the same un-timed step (common/operator_counter.h): ATen operator calls of the
  // training step (forward, loss, backward, optimizer; not the bench's own zeroing and checks),
  // and the host syncs among them.
  std::int64_t op_calls_forward = 0;
  std::int64_t op_calls_loss = 0;
  std::int64_t op_calls_backward = 0;
  std::int64_t op_calls_optimizer = 0;
  std::int64_t op_calls = 0;  // the four together
  std::int64_t host_syncs = 0;
  // The kernels, copies and sets the same step ran on a CUDA device (forward to optimizer, as
  // the calls); none elsewhere (common/device_kernel_counter.h).
  std::optional<DeviceActivityCounts> device_kernels;
};

// What a run measured on: recorded beside its results, since numbers from different machines,
// devices or LibTorch versions cannot be compared.
struct BenchRun {
  std::string config;         // the bench YAML's path
  std::string device;         // "cpu", "cuda:0", ...
  std::string torch_version;  // LibTorch's, e.g. "2.15.0"
  int threads = 0;            // intra-op threads
  std::int64_t batch_size = 0;
  int steps = 0;
  int warmup = 0;
  std::string precision = "32";  // training.precision: "32", "bf16-mixed", "16-mixed"
  // The square GEMM peak measured in the run (gemm_peak.h), on `threads` threads: float32, and
  // the precision's reduced dtype ("bfloat16", "float16"; empty at 32).
  double gemm_peak_fp32_gflops = 0;
  std::int64_t gemm_peak_fp32_size = 0;
  std::string reduced_dtype;
  double gemm_peak_reduced_gflops = 0;
  std::int64_t gemm_peak_reduced_size = 0;
};

// {"tool": "tft-bench", the run's keys, "results": [one object per strategy]}: the same shape
// as bench/peer/peer_bench.py's JSON, which bench/speed/peer-comparison.py reads beside it.
std::string results_to_json(const BenchRun& run, const std::vector<BenchResult>& results);

// The table as Markdown (BENCHMARKS.md) or aligned text (stdout); with `run`, a line under it
// names the precision and the GEMM peaks the "% of peak" column is taken against.
std::string results_to_markdown(const std::vector<BenchResult>& results,
                                const BenchRun* run = nullptr);

// Operator calls and host syncs per step, per strategy and phase, as Markdown.
std::string op_counts_to_markdown(const std::vector<BenchResult>& results);

// Memory saved (y) against step-time overhead (x), one labelled point per strategy.
std::string results_to_svg_chart(const std::vector<BenchResult>& results, const std::string& title);

}  // namespace tft::bench
