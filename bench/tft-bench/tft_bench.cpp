// tft-bench: measured activation memory and step time of the TFT under checkpointing
// strategies, all in one process and run, against `none` from the same run.
//
// Every strategy gets its own copy of the same initial model and its own Adam; the steps are
// interleaved (one step of each strategy per round, in an order that rotates every round) so
// machine noise and a place in the round fall on all alike.
// Each step draws dropout from the same seed in every strategy, so losses and gradients must
// match `none` bit for bit; the first step's are compared. Strategies with compressed
// boundaries (+bf16, +int8) are the exception: their relative gradient error is reported.
//
// On CUDA (--device cuda) every timer starts and stops at a device synchronisation, so a step's
// time is the GPU's as well as the host's; deterministic algorithms are switched on there, so
// the gradient comparison stays bitwise.
//
// --precision runs every strategy's model under the same mixed precision (autocast inside the
// model's forward; weights, Adam and the loss stay float32), so the comparison stays bitwise at
// bf16-mixed too. After the timed steps, one more un-timed step of each strategy is counted
// (flop_counter.h: FLOPs per step, recomputation included), and the machine's GEMM peak is
// measured at float32 and at the precision's reduced dtype (gemm_peak.h): achieved GFLOP/s and
// the fraction of the peak per strategy.
#include "bench_config.h"
#include "bench_result.h"
#include "bench_runner.h"
#include "budget_runners.h"
#include "flop_counter.h"
#include "gemm_peak.h"
#include "strategy_spec.h"

#include "common/compute_threads.h"
#include "common/cpu_clock.h"
#include "common/device.h"
#include "common/device_kernel_counter.h"
#include "common/error.h"
#include "common/operator_counter.h"
#include "data/batch.h"
#include "memory/block_cache.h"
#include "memory/memory_meter.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"
#include "nn/precision.h"
#include "optim/fused_adam.h"
#include "optim/gradient_buffers.h"
#include "planning/checkpoint_planning.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ATen/Context.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <variant>

namespace {

using namespace tft;
using bench::median;
using bench::planning_step;
using bench::Runner;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// 16-mixed's loss scale: a constant, not the trainer's dynamic LossScaler. The bench runs a
// handful of steps from a fresh initialisation, where 2^10 keeps float16's small gradients
// above its subnormal range without overflowing; a power of two, so that unscaling is exact
// and the strategies' gradients stay comparable bit for bit. A step whose gradients overflow
// is not skipped (the trainer's scaler would skip it): the bench measures time, not training.
constexpr double kFp16LossScale = 1024.0;

const char* dtype_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::Float: return "float32";
    default: return c10::toString(dtype);
  }
}

torch::Tensor randint_columns(int64_t batch, int64_t steps,
                              const std::vector<CategoricalVariable>& vars) {
  if (vars.empty()) return {};
  std::vector<torch::Tensor> columns;
  for (const auto& v : vars) {
    columns.push_back(steps > 0 ? torch::randint(v.cardinality, {batch, steps, 1}, torch::kLong)
                                : torch::randint(v.cardinality, {batch, 1}, torch::kLong));
  }
  return torch::cat(columns, -1);
}

torch::Tensor randn_or_undefined(std::vector<int64_t> shape) {
  return shape.back() == 0 ? torch::Tensor() : torch::randn(shape);
}

// A synthetic batch of the config's shape (the data do not matter for memory and time), drawn
// on the CPU so that every device sees the same numbers.
TFTBatch synthetic_batch(const bench::BenchConfig& config) {
  const auto& m = config.model;
  const auto& s = m.schema;
  const int64_t b = config.batch_size, enc = m.encoder_length, dec = m.prediction_length;
  const int64_t n_hist = static_cast<int64_t>(s.unknown_reals.size() + s.known_reals.size() + 1);
  std::vector<CategoricalVariable> hist_cats = s.unknown_categoricals;
  hist_cats.insert(hist_cats.end(), s.known_categoricals.begin(), s.known_categoricals.end());
  TFTBatch batch;
  batch.static_reals = randn_or_undefined({b, static_cast<int64_t>(s.static_reals.size())});
  batch.static_categoricals = randint_columns(b, 0, s.static_categoricals);
  batch.encoder_reals = torch::randn({b, enc, n_hist});
  batch.encoder_categoricals = randint_columns(b, enc, hist_cats);
  batch.decoder_reals = randn_or_undefined({b, dec, static_cast<int64_t>(s.known_reals.size())});
  batch.decoder_categoricals = randint_columns(b, dec, s.known_categoricals);
  return batch;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tft-bench: activation memory and step time of TFT checkpointing strategies"};
  std::string config_path = "bench/configs/reference.yaml";
  std::string strategies =
      "none,full,unit:static_encoder,unit:historical_encoder,unit:future_encoder,"
      "unit:lstm_encoder,unit:lstm_decoder,unit:attention_0,uniform:2,dynamic:0.5";
  int steps = 5, warmup = 1, threads = 2;
  std::string device_name = "cpu";
  std::string json_path, chart_path, markdown_path, profile_prefix, precision_name;
  std::string memory_budgets;
  bool list_ops = false;
  bool bitwise = false;
  app.add_option("--config", config_path, "bench YAML (model and batch shape)")
      ->check(CLI::ExistingFile);
  app.add_option("--strategies", strategies, "comma-separated strategies");
  app.add_option("--steps", steps, "measured steps per strategy")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "unmeasured steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "intra-op threads")->check(CLI::PositiveNumber);
  app.add_option("--device", device_name, "cpu, cuda or cuda:N");
  app.add_option("--precision", precision_name,
                 "32, bf16-mixed or 16-mixed (CUDA only); default: the config's "
                 "training.precision, else 32");
  app.add_option("--memory-budget", memory_budgets,
                 "budgets to plan for (checkpoint.memory_budget) and time beside the strategies: "
                 "sizes (700MiB,450MiB) or sweep:N (N from none's peak down to full+int8's)");
  app.add_flag("--bitwise", bitwise,
               "run every strategy with checkpoint.chunk_every_unit (every unit in its time "
               "chunks), where gradients must equal none's bit for bit (exit 3 otherwise)");
  app.add_flag("--list-ops", list_ops,
               "print every operator of each strategy's counted step (calls, FLOPs counted)");
  app.add_option("--json", json_path, "write results as JSON");
  app.add_option("--chart", chart_path, "write an SVG chart of memory saved vs overhead");
  app.add_option("--markdown", markdown_path, "write the table as Markdown");
  app.add_option(
      "--profile", profile_prefix,
      "after the timed steps, profile one more step of each strategy and write "
      "PREFIX-STRATEGY.trace.json (Chrome trace; bench/speed/profile-summary.py reads it)");
  CLI11_PARSE(app, argc, argv);

  try {
    tft::set_compute_threads(threads);
    const c10::Device device = resolve_device(device_name, "--device");
    if (device.is_cuda()) {
      // Bitwise-equal gradients across strategies need the same kernels every time; cuBLAS is
      // deterministic only with a fixed workspace, set before its first handle.
      ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
      at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
    }
    const bench::BenchConfig config = bench::load_bench_config(config_path);
    Precision precision = config.precision;
    if (!precision_name.empty()) {
      const std::optional<Precision> parsed = precision_from_string(precision_name);
      if (!parsed) {
        throw ConfigError("--precision: expected 32, bf16-mixed or 16-mixed (got \"" +
                          precision_name + "\")");
      }
      precision = *parsed;
    }
    if (precision == Precision::Fp16Mixed && !device.is_cuda()) {
      throw ConfigError(
          "precision 16-mixed (--precision or the config's training.precision) needs --device "
          "cuda: float16 needs loss scaling and the CPU has no fast float16 products; use "
          "bf16-mixed on the CPU");
    }
    const std::optional<c10::ScalarType> reduced_dtype = autocast_dtype(precision);
    torch::manual_seed(0);
    TFTModel reference(config.model);
    const auto unit_list = reference->units();
    std::vector<std::string> unit_names;
    for (const auto& u : unit_list) unit_names.push_back(u.name);
    const auto specs = bench::parse_strategies(strategies, unit_names);
    if (specs.front().label != "none") {
      throw ConfigError("--strategies: the first strategy must be 'none' (the baseline)");
    }

    torch::manual_seed(1);
    const TFTBatch batch = to_device(synthetic_batch(config), device);
    const torch::Tensor target =
        torch::randn({config.batch_size, config.model.prediction_length}).to(device);
    QuantileLoss loss_fn(config.model.quantiles);

    std::vector<Runner> runners;
    for (const auto& spec : specs) {
      Runner r;
      r.spec = spec;
      r.spec.config.chunk_every_unit = bitwise;
      torch::manual_seed(0);
      r.model = TFTModel(config.model);  // same seed: the same initial weights
      r.model->to(device);
      r.model->train();
      r.model->set_checkpointing(r.spec.config);
      r.model->set_precision(precision);  // before planning: the planner measures it
      if (std::holds_alternative<DynamicStrategy>(r.spec.config.strategy)) {
        // dynamic(n, fraction) runs the budget planner's measured choice.
        ensure_gradients(r.model->parameters());
        const CheckpointPlan plan =
            plan_checkpointing(r.model, planning_step(r.model, batch, target, loss_fn),
                               r.spec.config, config.batch_size, device);
        r.model->set_checkpointing(plan.config);
        r.model->set_checkpointed_chunks(plan.chunk_limits);
        r.plan_summary = plan.summary();
        r.plan_choice = plan.chosen();
        std::printf("%s: %s\n", spec.label.c_str(), r.plan_summary.c_str());
      }
      r.optimizer =
          std::make_unique<FusedAdam>(r.model->parameters(), torch::optim::AdamOptions(1e-3));
      runners.push_back(std::move(r));
    }
    std::vector<bench::BudgetRow> unfit_budgets;
    if (!memory_budgets.empty()) {
      bench::BudgetRunners planned =
          bench::plan_budget_runners(memory_budgets, config.model, precision, batch, target,
                                     loss_fn, config.batch_size, device, bitwise);
      for (Runner& r : planned.runners) runners.push_back(std::move(r));
      unfit_budgets = std::move(planned.unfit);
    }

    memory::MemoryMeter meter(device);
    // Steps reuse the blocks earlier steps freed, as they do in Trainer::train.
    const memory::BlockCacheScope reuse_freed_blocks;
    std::printf(
        "tft-bench: %s on %s, precision %s, batch %lld, %zu units, %d threads, %d warm-up + "
        "%d steps each\n",
        config_path.c_str(), device.str().c_str(), to_string(precision),
        static_cast<long long>(config.batch_size), unit_names.size(), threads, warmup, steps);
    struct StepTimes {
      double forward_s, step_s, step_cpu_s;
      int64_t peak;
      torch::Tensor loss;
    };
    // `ops`, when given, counts the step's operator calls by phase; the bench's own work
    // (zeroing the gradients, timing, probes) falls in a phase that is not reported.
    // `kernels`, when given, starts once the gradients are zeroed, and the caller finishes it.
    const auto train_step = [&](Runner& r, int step, OperatorCounter* ops = nullptr,
                                DeviceKernelCounter* kernels = nullptr) {
      const auto phase = [&](const char* name) {
        if (ops != nullptr) ops->begin_phase(name);
      };
      phase("bench");
      for (auto& p : r.model->parameters()) {
        if (p.grad().defined()) p.mutable_grad().zero_();
      }
      torch::manual_seed(1000 + step);  // seeds the CUDA generators too
      if (kernels != nullptr) kernels->start();
      synchronize(device);
      memory::ActivationProbe probe(meter);
      const auto start = Clock::now();
      const double cpu_start = process_cpu_seconds();
      // Only what the loss keeps lives on into backward (not even the prediction, which the
      // quantile loss does not save), as in a training step and the planners' steps.
      double forward_s = 0;
      torch::Tensor loss = [&] {
        phase("forward");
        const torch::Tensor prediction = r.model->forward(batch).prediction;
        phase("bench");
        synchronize(device);
        forward_s = seconds_since(start);
        phase("loss");
        return loss_fn(prediction, target);
      }();
      phase("backward");
      if (precision == Precision::Fp16Mixed) {
        (loss * kFp16LossScale).backward();
        for (auto& p : r.model->parameters()) {
          if (p.grad().defined()) p.mutable_grad().div_(kFp16LossScale);  // exact: 2^10
        }
      } else {
        loss.backward();
      }
      phase("bench");
      const int64_t peak = probe.activation_peak_bytes();
      phase("optimizer");
      r.optimizer->step();
      phase("bench");
      synchronize(device);
      return StepTimes{forward_s, seconds_since(start), process_cpu_seconds() - cpu_start, peak,
                       loss};
    };
    for (int step = 0; step < warmup + steps; ++step) {
      // The order rotates from round to round: a strategy's place in a round biases its
      // time (the first one of a round measured 8-15% slower than the same work later on).
      for (std::size_t k = 0; k < runners.size(); ++k) {
        Runner& r = runners[(k + static_cast<std::size_t>(step)) % runners.size()];
        const auto [forward_s, step_s, step_cpu_s, peak, loss] = train_step(r, step);
        if (step == 0) {
          r.first_loss = loss.item<double>();
          for (const auto& p : r.model->parameters()) r.first_grads.push_back(p.grad().clone());
        }
        if (step >= warmup) {
          r.step_seconds.push_back(step_s);
          r.step_cpu_seconds.push_back(step_cpu_s);
          r.forward_seconds.push_back(forward_s);
          r.peak = std::max(r.peak, peak);
        }
      }
      std::fprintf(stderr, "\r  round %d/%d", step + 1, warmup + steps);
    }
    std::fprintf(stderr, "\n");
    // FLOPs: one more step of each strategy, un-timed (the counter's callback sees every
    // operator's inputs, which slows them all).
    for (std::size_t k = 0; k < runners.size(); ++k) {
      Runner& r = runners[k];
      const bool list = list_ops;
      bench::FlopCounter counter(/*record_all_ops=*/list);
      OperatorCounter ops("bench");
      DeviceKernelCounter kernels(device);
      train_step(r, warmup + steps, &ops, &kernels);
      r.device_kernels = kernels.finish();
      if (!r.device_kernels && device.is_cuda()) {
        std::fprintf(stderr, "tft-bench: %s: kernels not counted: %s\n", r.spec.label.c_str(),
                     kernels.unavailable_reason().c_str());
      }
      r.flops = counter.count();
      r.record_operator_counts(ops);
      const auto tallies = counter.op_tallies();
      if (k == 0 || list) {
        std::printf("%s of '%s' (one step):", list ? "operators" : "counted operators",
                    r.spec.label.c_str());
        for (const auto& [name, tally] : tallies) {
          if (tally.flops > 0 || list) {
            std::printf("\n  %-40s x%-6lld %10.3f GFLOP", name.c_str(),
                        static_cast<long long>(tally.calls), tally.flops / 1e9);
          }
        }
        std::printf("\n");
      }
    }
    // The machine's GEMM peak, on the run's threads and device.
    const bench::GemmPeak fp32_peak = bench::measure_gemm_peak(c10::ScalarType::Float, device);
    std::optional<bench::GemmPeak> reduced_peak;
    if (reduced_dtype) reduced_peak = bench::measure_gemm_peak(*reduced_dtype, device);
    const double run_peak_gflops = (reduced_peak ? *reduced_peak : fp32_peak).gflops_per_second();
    if (!profile_prefix.empty()) {
      // One more step each, outside the timed ones: the profiler slows every operator.
      for (auto& r : runners) {
        const std::string path = profile_prefix + "-" + r.spec.label + ".trace.json";
        torch::autograd::profiler::RecordProfile profile(path);
        train_step(r, warmup + steps);
      }
    }

    const Runner& base = runners.front();
    const double base_step = median(base.step_seconds);
    std::vector<bench::BenchResult> results;
    for (const auto& r : runners) {
      bench::BenchResult res;
      res.strategy = r.spec.label;
      res.summary = r.plan_summary.empty() ? r.spec.config.summary() : "planned: " + r.plan_choice;
      res.step_seconds_median = median(r.step_seconds);
      res.forward_seconds_median = median(r.forward_seconds);
      res.peak_activation_bytes = r.peak;
      res.memory_savings_measured =
          1.0 - static_cast<double>(r.peak) / static_cast<double>(base.peak);
      res.compute_overhead_measured = res.step_seconds_median / base_step;
      res.memory_savings_predicted = r.spec.config.memory_savings(unit_names.size());
      res.compute_overhead_predicted = r.spec.config.compute_overhead(unit_names.size());
      double diff = std::abs(r.first_loss - base.first_loss);
      double error_squared = 0, base_squared = 0;
      for (std::size_t i = 0; i < r.first_grads.size(); ++i) {
        const torch::Tensor delta = r.first_grads[i] - base.first_grads[i];
        diff = std::max(diff, delta.abs().max().item<double>());
        error_squared += delta.square().sum().item<double>();
        base_squared += base.first_grads[i].square().sum().item<double>();
      }
      res.grad_max_abs_diff = diff;
      res.grad_relative_error = base_squared > 0 ? std::sqrt(error_squared / base_squared) : 0.0;
      res.loss = r.first_loss;
      res.gemm_flops_per_step = r.flops.gemm;
      res.lstm_flops_per_step = r.flops.lstm;
      res.flops_per_step = r.flops.total();
      res.achieved_gflops_per_second = res.flops_per_step / res.step_seconds_median / 1e9;
      res.peak_fraction = res.achieved_gflops_per_second / run_peak_gflops;
      res.fp32_peak_fraction = res.achieved_gflops_per_second / fp32_peak.gflops_per_second();
      res.op_calls_forward = r.op_calls_forward;
      res.op_calls_loss = r.op_calls_loss;
      res.op_calls_backward = r.op_calls_backward;
      res.op_calls_optimizer = r.op_calls_optimizer;
      res.op_calls =
          r.op_calls_forward + r.op_calls_loss + r.op_calls_backward + r.op_calls_optimizer;
      res.host_syncs = r.host_syncs;
      res.device_kernels = r.device_kernels;
      results.push_back(res);
    }

    bench::BenchRun run;
    run.config = config_path;
    run.device = device.str();
    run.torch_version = TORCH_VERSION;
    run.threads = threads;
    run.batch_size = config.batch_size;
    run.steps = steps;
    run.warmup = warmup;
    run.precision = to_string(precision);
    run.gemm_peak_fp32_gflops = fp32_peak.gflops_per_second();
    run.gemm_peak_fp32_size = fp32_peak.size;
    if (reduced_peak) {
      run.reduced_dtype = dtype_name(reduced_peak->dtype);
      run.gemm_peak_reduced_gflops = reduced_peak->gflops_per_second();
      run.gemm_peak_reduced_size = reduced_peak->size;
    }

    const std::vector<bench::BudgetRow> budget_rows =
        bench::budget_rows(runners, std::move(unfit_budgets));
    std::cout << "\n" << bench::results_to_markdown(results, &run);
    std::cout << "\nOperator calls per training step (one counted step; "
              << (bitwise ? "every unit in its chunks, --bitwise"
                          : "units that recompute nothing run whole")
              << "):\n\n"
              << bench::op_counts_to_markdown(results);
    if (!budget_rows.empty()) {
      std::cout << "\n"
                << bench::budget_rows_to_markdown(budget_rows) << "\n"
                << bench::budget_rows_verdict(budget_rows) << "\n";
    }
    for (const auto& res : results) {
      std::printf(
          "%s: %.3f GFLOP/step (GEMM %.3f + LSTM %.3f), %.1f GFLOP/s = %.1f%% of the %s "
          "peak%s",
          res.strategy.c_str(), res.flops_per_step / 1e9, res.gemm_flops_per_step / 1e9,
          res.lstm_flops_per_step / 1e9, res.achieved_gflops_per_second, res.peak_fraction * 100,
          reduced_peak ? dtype_name(reduced_peak->dtype) : "float32", reduced_peak ? "" : "\n");
      if (reduced_peak) std::printf(", %.1f%% of the float32 peak\n", res.fp32_peak_fraction * 100);
    }
    // The physical floor of full recomputation: one more forward per step.
    const double floor = 1.0 + median(base.forward_seconds) / base_step;
    std::printf(
        "\nforward %.1f ms of a %.1f ms step without checkpointing: recomputing every unit "
        "costs at least x%.3f (the physical floor)\n",
        median(base.forward_seconds) * 1e3, base_step * 1e3, floor);
    for (const auto& res : results) {
      if (res.strategy == "full") {
        std::printf("full checkpointing: x%.3f measured = %.2f x the floor\n",
                    res.compute_overhead_measured, res.compute_overhead_measured / floor);
      }
    }
    if (!json_path.empty()) {
      nlohmann::json json = nlohmann::json::parse(bench::results_to_json(run, results));
      if (!budget_rows.empty()) json["memory_budgets"] = bench::budget_rows_to_json(budget_rows);
      std::ofstream(json_path) << json.dump(2) << "\n";
    }
    if (!chart_path.empty()) {
      std::ofstream(chart_path) << bench::results_to_svg_chart(
          results, "TFT activation memory saved vs step time (" + config_path + ")");
    }
    if (!markdown_path.empty()) {
      std::ofstream(markdown_path)
          << bench::results_to_markdown(results, &run) << (budget_rows.empty() ? "" : "\n")
          << (budget_rows.empty() ? std::string() : bench::budget_rows_to_markdown(budget_rows))
          << "\n"
          << bench::op_counts_to_markdown(results);
    }
    // With --bitwise, every strategy with float32 boundaries must match none bit for bit
    // (compressed boundaries change the gradients by design). Without, units that recompute
    // nothing run whole and chunks draw their own dropout masks: the step is another draw.
    if (!bitwise) return 0;
    bool all_equal = true;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const bool exact = runners[i].spec.config.boundary_dtype == BoundaryDtype::kFloat32;
      all_equal = all_equal && (!exact || results[i].grad_max_abs_diff == 0.0);
    }
    if (!all_equal) {
      std::fprintf(stderr, "tft-bench: gradients differ from 'none' (see grad diff column)\n");
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tft-bench: %s\n", e.what());
    return 1;
  }
}
