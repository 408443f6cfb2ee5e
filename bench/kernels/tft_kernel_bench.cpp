// tft-kernel-bench: the point-wise kernels of the TFT step alone (nn/), at the shapes the reference
// config gives them, against the unfused ATen operators doing the same arithmetic: dropout, the
// gate, add and norm, and the variable selection's weighted form of it. Each fused kernel is timed
// on this CPU's widest instruction set and on the baseline (nn/cpu_isa.h), with --threads
// threads. Before they were vectorised, and compiled with OpenMP so that at::parallel_for splits
// them over threads, these kernels took about a third of a reference step (tft-bench --profile).
//
// Freed blocks are reused, as in training. Output: a Markdown table (one row per kernel and path)
// on stdout, and with --json a file.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "memory/block_cache.h"
#include "memory/tracking_allocator.h"
#include "nn/cpu_isa.h"
#include "nn/dropout.h"
#include "nn/glu_add_norm.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double forward_ms = 0;
  double backward_ms = 0;
};

// The median over `repeats` of forward (make()) and of backward (its output's sum's gradient).
Timing time_kernel(const std::function<torch::Tensor()>& make, int repeats) {
  std::vector<double> forward, backward;
  for (int i = 0; i < repeats + 1; ++i) {
    auto started = Clock::now();
    torch::Tensor out = make();
    const double f = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    const torch::Tensor grad = torch::ones_like(out);
    started = Clock::now();
    out.backward(grad);
    const double b = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    if (i == 0) continue;  // warm-up: first touches of the allocator and the thread pool
    forward.push_back(f);
    backward.push_back(b);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {median(forward), median(backward)};
}

torch::Tensor leaf(torch::IntArrayRef sizes) { return torch::randn(sizes).requires_grad_(true); }

// LayerNorm(skip + GLU(x)) as the unfused operators compute it.
torch::Tensor unfused_glu_add_norm(const torch::Tensor& x, const torch::Tensor& skip,
                                   const torch::Tensor& w, const torch::Tensor& b) {
  return torch::layer_norm(torch::glu(x, -1) + skip, {w.size(-1)}, w, b, 1e-5);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tft-kernel-bench: the TFT step's point-wise kernels alone"};
  int threads = 2, repeats = 7;
  std::int64_t batch = 64, steps = 168, hidden = 160, groups = 8;
  std::string json_path;
  app.add_option("--threads", threads, "intra-op threads")->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "timed repeats (the median is reported)")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "windows per batch (reference: 64)");
  app.add_option("--steps", steps, "time steps per window (reference: the encoder's 168)");
  app.add_option("--hidden", hidden, "hidden size (reference: 160)");
  app.add_option("--groups", groups, "variables selected together (reference: 8 historical)");
  app.add_option("--json", json_path, "write the results as JSON");
  CLI11_PARSE(app, argc, argv);
  at::set_num_threads(threads);
  torch::manual_seed(0);
  // Freed blocks are reused as in a training run (memory/block_cache.h), so the times are the
  // kernels', not the page faults of fresh allocations.
  const tft::memory::CpuMemoryTrackingScope tracking;
  const tft::memory::BlockCacheScope reuse_freed_blocks;

  const std::int64_t rows = batch * steps;
  const std::string widest = tft::to_string(tft::cpu_isa());
  // The fused kernels on this CPU's widest instruction set, then on the baseline.
  auto time_both = [&](const std::function<torch::Tensor()>& make) {
    const Timing wide = time_kernel(make, repeats);
    const tft::ScopedCpuIsa baseline(tft::CpuIsa::kBaseline);
    return std::pair<Timing, Timing>{wide, time_kernel(make, repeats)};
  };
  struct Row {
    std::string kernel, path;
    Timing t;
    std::int64_t elements;
  };
  std::vector<Row> results;

  {  // Dropout on a GRN's hidden layer: [groups * rows, hidden].
    const torch::Tensor x = leaf({groups * rows, hidden});
    tft::Dropout fused(0.1);
    fused->train();
    const auto [wide, base] = time_both([&] { return fused(x); });
    results.push_back({"dropout p=0.1", "fused, seed kept (" + widest + ")", wide, x.numel()});
    results.push_back({"dropout p=0.1", "fused, seed kept (baseline)", base, x.numel()});
    results.push_back({"dropout p=0.1", "ATen (mask kept)",
                       time_kernel([&] { return torch::dropout(x, 0.1, true); }, repeats),
                       x.numel()});
  }
  {  // Gate, add and norm of one stream: x [rows, 2H], skip [rows, H].
    const torch::Tensor x = leaf({rows, 2 * hidden}), skip = leaf({rows, hidden});
    const torch::Tensor w = leaf({hidden}), b = leaf({hidden});
    const auto [wide, base] = time_both([&] { return tft::glu_add_norm(x, skip, w, b, 1e-5); });
    results.push_back({"glu_add_norm", "fused (" + widest + ")", wide, skip.numel()});
    results.push_back({"glu_add_norm", "fused (baseline)", base, skip.numel()});
    results.push_back({"glu_add_norm", "ATen",
                       time_kernel([&] { return unfused_glu_add_norm(x, skip, w, b); }, repeats),
                       skip.numel()});
  }
  {  // The variable selection's grouped GRNs with their weighted sum.
    const torch::Tensor x = leaf({groups, rows, 2 * hidden}), skip = leaf({groups, rows, hidden});
    const torch::Tensor w = leaf({groups, hidden}), b = leaf({groups, hidden});
    const torch::Tensor selection =
        torch::softmax(torch::randn({rows, groups}), -1).requires_grad_(true);
    const auto [wide, base] =
        time_both([&] { return tft::glu_add_norm_weighted(x, skip, w, b, selection, 1e-5); });
    results.push_back({"glu_add_norm_weighted", "fused (" + widest + ")", wide, skip.numel()});
    results.push_back({"glu_add_norm_weighted", "fused (baseline)", base, skip.numel()});
    results.push_back({"glu_add_norm_weighted", "ATen",
                       time_kernel(
                           [&] {
                             const torch::Tensor y = torch::glu(x, -1) + skip;
                             const torch::Tensor normed =
                                 torch::layer_norm(y, {hidden}, {}, {}, 1e-5) * w.unsqueeze(1) +
                                 b.unsqueeze(1);
                             return (normed * selection.t().unsqueeze(-1)).sum(0);
                           },
                           repeats),
                       skip.numel()});
  }

  std::cout << "| kernel | path | forward ms | backward ms | ns per element (fwd + bwd) |\n"
            << "|---|---|---:|---:|---:|\n";
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : results) {
    const double ns = (r.t.forward_ms + r.t.backward_ms) * 1e6 / static_cast<double>(r.elements);
    std::printf("| %s | %s | %.2f | %.2f | %.2f |\n", r.kernel.c_str(), r.path.c_str(),
                r.t.forward_ms, r.t.backward_ms, ns);
    out.push_back({{"kernel", r.kernel},
                   {"path", r.path},
                   {"forward_ms", r.t.forward_ms},
                   {"backward_ms", r.t.backward_ms},
                   {"elements", r.elements}});
  }
  std::printf("\n%d threads; batch %lld, steps %lld, hidden %lld, groups %lld; median of %d.\n",
              threads, static_cast<long long>(batch), static_cast<long long>(steps),
              static_cast<long long>(hidden), static_cast<long long>(groups), repeats);
  if (!json_path.empty()) {
    std::ofstream(json_path) << nlohmann::json{{"threads", threads}, {"batch", batch},
                                               {"steps", steps},     {"hidden", hidden},
                                               {"groups", groups},   {"kernels", out}}
                                    .dump(2)
                             << "\n";
  }
  return 0;
}
