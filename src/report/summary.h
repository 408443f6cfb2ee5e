// summary.json and its human-readable form: how a run ended.
//
//   {"final_validation_loss", "best_validation_loss", "best_epoch", "initial_validation_loss",
//    "validation": {"loss", "q_risk_p50", "q_risk_p90", "mae_p50", "windows"} (the saved
//    model, i.e. the best epoch's weights), "target_center": {"center", "scope", "reason",
//    "season"}, "baselines", "calibration", "warnings", "epochs_run", "resumed_from_epoch",
//    "resumed_from_step",
//    "early_stopped", "train_seconds", "samples_per_second",
//    "memory": {"device", "peak_activation_bytes_training", "checkpointed_peak_bytes",
//               "unchecked_peak_bytes", "checkpoint_summary", "boundary_dtype", "units",
//               "predicted_savings", "measured_savings", "predicted_compute_overhead"},
//    "output_directory"}
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/train_report.h"

namespace tft {

nlohmann::ordered_json summary_json(const TrainReport& report);

// Aligned "name: value" lines, the same fields as summary_json.
std::string summary_text(const TrainReport& report);

// A figure as the summaries print it: printf's `format`, or "n/a" when it is not finite.
std::string figure_text(double value, const char* format = "%.6g");
// A fraction as a percentage with one decimal ("83.2%"), or "n/a" when it is not finite.
std::string percent_text(double fraction);

}  // namespace tft
