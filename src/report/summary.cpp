#include "report/summary.h"

#include <cmath>
#include <cstdio>

#include "common/format.h"  // format_bytes
#include "common/json_util.h"

namespace tft {

nlohmann::ordered_json summary_json(const TrainReport& r) {
  using J = nlohmann::ordered_json;
  J j;
  j["final_validation_loss"] = json_number<J>(r.final_validation_loss);
  j["best_validation_loss"] = json_number<J>(r.best_validation_loss);
  j["best_epoch"] = r.best_epoch;
  j["initial_validation_loss"] = json_number<J>(r.initial_validation_loss);
  j["validation"] = validation_metrics_to_json(r.validation);
  j["target_center"] = {{"center", r.target_center},
                        {"scope", r.target_scope},
                        {"reason", r.target_center_reason},
                        {"season", r.target_season}};
  j["whole_number_median"] = r.whole_number_median;
  j["baselines"] = baseline_scores_to_json(r.baselines);
  j["calibration"] =
      r.calibration ? calibration_result_to_json(*r.calibration) : nlohmann::ordered_json();
  j["warnings"] = r.warnings;
  j["threads"] = {
      {"threads", r.threads}, {"reason", r.threads_reason}, {"changes", r.thread_changes}};
  j["init_from"] =
      r.init_from.empty() ? J() : J{{"path", r.init_from}, {"sha256", r.init_from_sha256}};
  j["epochs_run"] = r.epochs_run;
  j["resumed_from_epoch"] = r.resumed_from_epoch;
  j["resumed_from_step"] = r.resumed_from_step;
  j["early_stopped"] = r.early_stopped;
  j["train_seconds"] = r.train_seconds;
  j["samples_per_second"] = r.samples_per_second;
  J memory;
  memory["device"] = r.memory.device;
  memory["peak_activation_bytes_training"] = r.peak_activation_bytes;
  memory["checkpointed_peak_bytes"] = r.memory.checkpointed_peak_bytes;
  memory["unchecked_peak_bytes"] = r.memory.unchecked_peak_bytes;
  memory["checkpoint_summary"] = r.memory.checkpoint_summary;
  memory["checkpointed_units"] = r.memory.checkpointed_units;
  memory["boundary_dtype"] = r.memory.boundary_dtype;
  memory["units"] = r.memory.num_units;
  memory["predicted_savings"] = json_number<J>(r.memory.predicted_savings);
  memory["measured_savings"] = json_number<J>(r.memory.measured_savings);
  memory["predicted_compute_overhead"] = json_number<J>(r.memory.predicted_compute_overhead);
  if (r.memory.plan) memory["plan"] = r.memory.plan->to_json();
  j["memory"] = memory;
  j["precision"] = r.precision;
  j["quantization_aware_training"] = r.quantization;
  j["output_directory"] = r.output_directory;
  return j;
}

std::string figure_text(double value, const char* format) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string percent_text(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

namespace {

// " (resumed after epoch 2)", " (resumed at epoch 3, step 40)", or nothing for a fresh run.
std::string resumed_text(const TrainReport& r) {
  if (r.resumed_from_step > 0) {
    return " (resumed at epoch " + std::to_string(r.resumed_from_epoch + 1) + ", step " +
           std::to_string(r.resumed_from_step) + ")";
  }
  if (r.resumed_from_epoch > 0) {
    return " (resumed after epoch " + std::to_string(r.resumed_from_epoch) + ")";
  }
  return "";
}

// "every unit (6)", "none of 6 units", or "historical_encoder, lstm_encoder (2 of 6 units)".
std::string checkpointing_text(const MemoryReport& m) {
  const std::size_t n = m.checkpointed_units.size();
  const std::string total = std::to_string(m.num_units);
  if (n == 0) return "none of " + total + " units";
  if (n == m.num_units) return "every unit (" + total + ")";
  std::string names;
  for (const std::string& name : m.checkpointed_units) names += (names.empty() ? "" : ", ") + name;
  return names + " (" + std::to_string(n) + " of " + total + " units)";
}

}  // namespace

std::string summary_text(const TrainReport& r) {
  std::string out;
  auto line = [&](const char* name, const std::string& value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-34s ", name);
    out += buf + value + "\n";
  };
  out += "Training summary\n";
  if (!r.init_from.empty()) {
    line("started from (refit)", r.init_from + " (SHA-256 " + r.init_from_sha256 + ")");
  }
  line("epochs run", std::to_string(r.epochs_run) + (r.early_stopped ? " (early stopped)" : "") +
                         resumed_text(r));
  line("validation loss: initial", figure_text(r.initial_validation_loss));
  line("validation loss: final epoch", figure_text(r.final_validation_loss));
  line("validation loss: best",
       figure_text(r.best_validation_loss) + " (epoch " + std::to_string(r.best_epoch) + ")");
  line("saved model: q-risk P50", figure_text(r.validation.q_risk_p50, "%.4f"));
  line("saved model: q-risk P90", figure_text(r.validation.q_risk_p90, "%.4f"));
  line("saved model: MAE P50", figure_text(r.validation.mae_p50));
  // Between the lowest and the highest quantile: P10-P90 with the default quantiles.
  line("saved model: interval coverage", percent_text(r.validation.interval_coverage));
  if (!r.validation.coverage.empty()) {
    std::string coverage;
    for (const double c : r.validation.coverage)
      coverage += (coverage.empty() ? "" : ", ") + percent_text(c);
    line("saved model: coverage per quantile", coverage);
  }
  line("target center",
       r.target_center + ", scope " + r.target_scope + " (" + r.target_center_reason + ")");
  if (r.whole_number_median) line("median", "whole numbers (output.median_rounding)");
  if (r.baselines.naive.windows > 0) {
    line("naive forecast: q-risk P50, P90", figure_text(r.baselines.naive.q_risk_p50, "%.4f") +
                                                ", " +
                                                figure_text(r.baselines.naive.q_risk_p90, "%.4f"));
  }
  if (r.baselines.seasonal_naive.windows > 0) {
    line("seasonal naive: q-risk P50, P90",
         figure_text(r.baselines.seasonal_naive.q_risk_p50, "%.4f") + ", " +
             figure_text(r.baselines.seasonal_naive.q_risk_p90, "%.4f") + " (m = " +
             std::to_string(r.baselines.seasonality) + ", " + r.baselines.seasonality_source + ")");
  } else if (r.baselines.naive.windows > 0) {
    line("seasonal naive", "not scored (" + r.baselines.seasonality_source + ")");
  }
  if (r.calibration && r.calibration->cross_fitted) {
    const ValidationMetrics& c = *r.calibration->cross_fitted;
    line("calibrated: q-risk P50, P90", figure_text(c.q_risk_p50, "%.4f") + ", " +
                                            figure_text(c.q_risk_p90, "%.4f") +
                                            " (conformal, cross-fitted)");
    line("calibrated: interval coverage", percent_text(c.interval_coverage));
  }
  for (const std::string& warning : r.warnings) line("warning", warning);
  line("validation windows", std::to_string(r.validation.windows));
  line(
      "threads",
      std::to_string(r.threads) + " (" + r.threads_reason +
          (r.thread_changes > 0 ? "; changed " + std::to_string(r.thread_changes) + " times" : "") +
          ")");
  line("training time", figure_text(r.train_seconds, "%.1f") + " s");
  line("samples/s", figure_text(r.samples_per_second, "%.0f"));
  line("device", r.memory.device);
  line("precision", r.precision);
  line("checkpointing", checkpointing_text(r.memory));
  line("checkpoint boundaries", r.memory.boundary_dtype);
  line("quantization-aware training", r.quantization);
  line("peak activation: training", format_bytes(r.peak_activation_bytes));
  line("peak activation: checkpointed step", format_bytes(r.memory.checkpointed_peak_bytes));
  line("peak activation: unchecked step", format_bytes(r.memory.unchecked_peak_bytes));
  line("activation savings: measured", percent_text(r.memory.measured_savings));
  line("activation savings: seed formula",
       percent_text(r.memory.predicted_savings) + " (counts units, not bytes)");
  line("compute overhead: seed formula", figure_text(r.memory.predicted_compute_overhead, "%.2fx"));
  if (r.memory.plan) {
    line("checkpoint plan", r.memory.plan->summary());
    for (const PlannedUnit& u : r.memory.plan->units) {
      const std::string choice = !u.checkpointed() ? std::string("kept")
                                 : u.checkpointed_chunks < u.chunks
                                     ? std::to_string(u.checkpointed_chunks) + " of " +
                                           std::to_string(u.chunks) + " chunks checkpointed"
                                     : std::string("checkpointed");
      line(("  " + u.name).c_str(), choice + ": saves " + format_bytes(u.planned_saved_bytes) +
                                        ", keeps " + format_bytes(u.kept_bytes) + ", +" +
                                        figure_text(1e3 * u.planned_recompute_seconds, "%.1f") +
                                        " ms (whole unit: saves " + format_bytes(u.saved_bytes) +
                                        ", +" + figure_text(1e3 * u.recompute_seconds, "%.1f") +
                                        " ms)");
    }
  }
  line("output", r.output_directory);
  return out;
}

}  // namespace tft
