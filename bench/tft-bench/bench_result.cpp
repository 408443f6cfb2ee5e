#include "bench_result.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tft::bench {

std::string results_to_json(const BenchRun& run, const std::vector<BenchResult>& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) {
    rows.push_back({{"strategy", r.strategy},
                    {"step_seconds_median", r.step_seconds_median},
                    {"peak_activation_bytes", r.peak_activation_bytes},
                    {"memory_savings_measured", r.memory_savings_measured},
                    {"compute_overhead_measured", r.compute_overhead_measured},
                    {"memory_savings_predicted", r.memory_savings_predicted},
                    {"compute_overhead_predicted", r.compute_overhead_predicted},
                    {"grad_max_abs_diff", r.grad_max_abs_diff},
                    {"grad_relative_error", r.grad_relative_error},
                    {"loss", r.loss},
                    {"gemm_flops_per_step", r.gemm_flops_per_step},
                    {"lstm_flops_per_step", r.lstm_flops_per_step},
                    {"flops_per_step", r.flops_per_step},
                    {"achieved_gflops_per_second", r.achieved_gflops_per_second},
                    {"peak_fraction", r.peak_fraction},
                    {"fp32_peak_fraction", r.fp32_peak_fraction},
                    {"op_calls", r.op_calls},
                    {"op_calls_by_phase",
                     {{"forward", r.op_calls_forward},
                      {"loss", r.op_calls_loss},
                      {"backward", r.op_calls_backward},
                      {"optimizer", r.op_calls_optimizer}}},
                    {"host_syncs", r.host_syncs}});
    if (r.device_kernels) {
      rows.back()["device_kernels"] = {{"kernels", r.device_kernels->kernels},
                                       {"memcpys", r.device_kernels->memcpys},
                                       {"memsets", r.device_kernels->memsets}};
    }
  }
  nlohmann::json peaks = {
      {"float32",
       {{"gflops_per_second", run.gemm_peak_fp32_gflops}, {"size", run.gemm_peak_fp32_size}}}};
  if (!run.reduced_dtype.empty()) {
    peaks[run.reduced_dtype] = {{"gflops_per_second", run.gemm_peak_reduced_gflops},
                                {"size", run.gemm_peak_reduced_size}};
  }
  const nlohmann::json document = {{"tool", "tft-bench"},
                                   {"config", run.config},
                                   {"device", run.device},
                                   {"torch_version", run.torch_version},
                                   {"threads", run.threads},
                                   {"batch_size", run.batch_size},
                                   {"steps", run.steps},
                                   {"warmup", run.warmup},
                                   {"precision", run.precision},
                                   {"gemm_peak", peaks},
                                   {"results", rows}};
  return document.dump(2) + "\n";
}

std::string results_to_markdown(const std::vector<BenchResult>& results, const BenchRun* run) {
  std::ostringstream out;
  out << "| strategy | step ms | overhead (measured) | overhead (seed formula) | peak activations "
         "MiB | memory saved (measured) | memory saved (seed formula) | max abs grad diff | "
         "relative grad error | loss | GFLOP/step | GFLOP/s | % of peak |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  char line[512];
  for (const auto& r : results) {
    std::snprintf(line, sizeof line,
                  "| %s | %.1f | %+.1f%% | %+.1f%% | %.1f | %.1f%% | %.1f%% | %g | %.2g | %.6f | "
                  "%.2f | %.1f | %.1f%% |\n",
                  r.strategy.c_str(), r.step_seconds_median * 1e3,
                  (r.compute_overhead_measured - 1) * 100, (r.compute_overhead_predicted - 1) * 100,
                  r.peak_activation_bytes / 1048576.0, r.memory_savings_measured * 100,
                  r.memory_savings_predicted * 100, r.grad_max_abs_diff, r.grad_relative_error,
                  r.loss, r.flops_per_step / 1e9, r.achieved_gflops_per_second,
                  r.peak_fraction * 100);
    out << line;
  }
  if (run != nullptr) {
    char note[512];
    if (run->reduced_dtype.empty()) {
      std::snprintf(note, sizeof note,
                    "\nPrecision %s; %% of peak: of the float32 GEMM peak measured in the run "
                    "(%.1f GFLOP/s, n = %lld, %d threads).\n",
                    run->precision.c_str(), run->gemm_peak_fp32_gflops,
                    static_cast<long long>(run->gemm_peak_fp32_size), run->threads);
    } else {
      std::snprintf(note, sizeof note,
                    "\nPrecision %s; %% of peak: of the %s GEMM peak measured in the run "
                    "(%.1f GFLOP/s, n = %lld; float32: %.1f GFLOP/s, n = %lld; %d threads).\n",
                    run->precision.c_str(), run->reduced_dtype.c_str(),
                    run->gemm_peak_reduced_gflops,
                    static_cast<long long>(run->gemm_peak_reduced_size), run->gemm_peak_fp32_gflops,
                    static_cast<long long>(run->gemm_peak_fp32_size), run->threads);
    }
    out << note;
  }
  return out.str();
}

std::string op_counts_to_markdown(const std::vector<BenchResult>& results) {
  // On a CUDA device, the kernels each step ran beside the calls that launched them.
  const bool kernels = std::any_of(results.begin(), results.end(), [](const BenchResult& r) {
    return r.device_kernels.has_value();
  });
  std::ostringstream out;
  out << "| strategy | operator calls | forward | loss | backward | optimizer | host syncs | "
         "calls / none's |"
      << (kernels ? " kernels | copies and sets | kernels / none's |" : "") << "\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|" << (kernels ? "---:|---:|---:|" : "") << "\n";
  const double base = results.empty() ? 0.0 : static_cast<double>(results.front().op_calls);
  const auto kernels_of = [](const BenchResult& r) {
    return r.device_kernels ? static_cast<double>(r.device_kernels->kernels) : 0.0;
  };
  const double base_kernels = results.empty() ? 0.0 : kernels_of(results.front());
  char line[320];
  for (const auto& r : results) {
    std::snprintf(
        line, sizeof line, "| %s | %lld | %lld | %lld | %lld | %lld | %lld | %.2f |",
        r.strategy.c_str(), static_cast<long long>(r.op_calls),
        static_cast<long long>(r.op_calls_forward), static_cast<long long>(r.op_calls_loss),
        static_cast<long long>(r.op_calls_backward), static_cast<long long>(r.op_calls_optimizer),
        static_cast<long long>(r.host_syncs),
        base > 0 ? static_cast<double>(r.op_calls) / base : 0.0);
    out << line;
    if (kernels && r.device_kernels) {
      std::snprintf(line, sizeof line, " %lld | %lld | %.2f |",
                    static_cast<long long>(r.device_kernels->kernels),
                    static_cast<long long>(r.device_kernels->memcpys + r.device_kernels->memsets),
                    base_kernels > 0 ? kernels_of(r) / base_kernels : 0.0);
      out << line;
    } else if (kernels) {
      out << " not counted | | |";
    }
    out << "\n";
  }
  return out.str();
}

std::string results_to_svg_chart(const std::vector<BenchResult>& results,
                                 const std::string& title) {
  const double width = 720, height = 480, left = 70, right = 200, top = 50, bottom = 60;
  double max_overhead = 10;  // percent; the axis grows to fit
  for (const auto& r : results) {
    max_overhead = std::max(max_overhead, (r.compute_overhead_measured - 1) * 100);
  }
  max_overhead = std::ceil(max_overhead / 10) * 10;
  const double min_overhead = std::min(0.0, [&] {
    double lowest = 0;
    for (const auto& r : results)
      lowest = std::min(lowest, (r.compute_overhead_measured - 1) * 100);
    return std::floor(lowest / 5) * 5;
  }());
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  auto x_of = [&](double overhead_pct) {
    return left + (overhead_pct - min_overhead) / (max_overhead - min_overhead) * plot_w;
  };
  auto y_of = [&](double saved_pct) { return top + (100 - saved_pct) / 100 * plot_h; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"28\" font-size=\"15\">" << title << "</text>\n";
  for (int pct = 0; pct <= 100; pct += 20) {  // y grid
    svg << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << y_of(pct)
        << "\" y2=\"" << y_of(pct) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 8 << "\" y=\"" << y_of(pct) + 4 << "\" text-anchor=\"end\">"
        << pct << "%</text>\n";
  }
  const double step = (max_overhead - min_overhead) > 50 ? 20 : 10;
  for (double pct = min_overhead; pct <= max_overhead + 1e-9; pct += step) {  // x grid
    svg << "<line y1=\"" << top << "\" y2=\"" << top + plot_h << "\" x1=\"" << x_of(pct)
        << "\" x2=\"" << x_of(pct) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << x_of(pct) << "\" y=\"" << top + plot_h + 18
        << "\" text-anchor=\"middle\">" << (pct > 0 ? "+" : "") << pct << "%</text>\n";
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" fill=\"none\" stroke=\"#444\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 15
      << "\" text-anchor=\"middle\">step-time overhead vs no checkpointing (measured)</text>\n"
      << "<text transform=\"translate(18," << top + plot_h / 2
      << ") rotate(-90)\" text-anchor=\"middle\">activation memory saved (measured)</text>\n";
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                           "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const char* colour = colours[i % 10];
    const double x = x_of((r.compute_overhead_measured - 1) * 100);
    const double y = y_of(r.memory_savings_measured * 100);
    svg << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"6\" fill=\"" << colour << "\"/>\n";
    // Legend on the right, so labels of nearby points never overlap.
    const double ly = top + 10 + 20.0 * static_cast<double>(i);
    svg << "<circle cx=\"" << left + plot_w + 20 << "\" cy=\"" << ly << "\" r=\"5\" fill=\""
        << colour << "\"/>\n<text x=\"" << left + plot_w + 32 << "\" y=\"" << ly + 4 << "\">"
        << r.strategy << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace tft::bench
