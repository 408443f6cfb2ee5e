// TrainingRun's end: the report of a finished run and the files rank 0 writes (training_run.h).
#include <cmath>

#include "common/atomic_file.h"
#include "report/forecast_csv.h"
#include "report/forecast_svg.h"
#include "report/interpretation_svg.h"
#include "report/summary.h"
#include "train/trainer.h"
#include "train/trainer_state.h"
#include "train/training_run.h"

namespace tft {

namespace fs = std::filesystem;

TrainReport TrainingRun::make_report() {
  const TrainingConfig& training = state_.config.training;
  TrainReport report;
  report.history = saved_.history;
  report.initial_validation_loss = saved_.initial_validation_loss;
  // A refit whose epochs never beat the weights it started from keeps them: best epoch 0.
  if (has_validation_ && std::isfinite(early_stopping_.best())) {
    report.best_validation_loss = early_stopping_.best();
  }
  report.best_epoch = early_stopping_.best_epoch();
  report.precision = to_string(training.precision);
  if (training.qat.enabled) {
    report.quantization = std::to_string(training.qat.weight_bits) + "-bit weights, " +
                          std::to_string(training.qat.activation_bits) +
                          "-bit inputs, from epoch " + std::to_string(training.qat.start_epoch);
    if (training.qat.freeze_observers_epoch > 0) {
      report.quantization +=
          ", observers frozen after epoch " + std::to_string(training.qat.freeze_observers_epoch);
    }
  }
  if (has_validation_ && !saved_.history.empty()) {
    report.final_validation_loss = saved_.history.back().validation.loss;
  }
  report.epochs_run = saved_.epochs_completed;
  report.resumed_from_epoch = resumed_from_epoch_;
  report.resumed_from_step = resumed_from_step_;
  report.early_stopped = saved_.stopped_early;
  report.train_seconds = saved_.train_seconds;
  report.samples_per_second = saved_.train_seconds > 0
                                  ? static_cast<double>(saved_.train_samples) / saved_.train_seconds
                                  : 0.0;
  report.peak_activation_bytes = saved_.peak_activation_bytes;
  report.validation = trainer_.evaluate();
  const DataTransforms& transforms = state_.dataset.transforms();
  report.target_center = to_string(transforms.target_normalizer.center);
  report.target_scope = to_string(transforms.target_normalizer.scope);
  report.target_center_reason = state_.dataset.target_center_reason();
  report.init_from = state_.init_from;
  report.init_from_sha256 = state_.init_from_sha256;
  report.target_season = transforms.target_season;
  report.whole_number_median = transforms.whole_number_median;
  report.baselines = baselines_;
  if (has_validation_) report.warnings = baseline_warnings(report.validation, baselines_);
  report.threads = state_.compute_threads.threads;
  report.threads_reason = state_.compute_threads.reason;
  report.thread_changes = state_.compute_thread_changes;
  if (!state_.compute_threads.warning.empty()) {
    report.warnings.push_back(state_.compute_threads.warning);
  }
  report.output_directory = trainer_.output_directory().string();
  return report;
}

void TrainingRun::write_outputs(TrainReport& report) {
  const fs::path out = trainer_.output_directory();
  trainer_.save_model();
  const Predictions predictions = trainer_.predict();
  write_forecast_csv(out / "forecast.csv", state_.dataset, predictions,
                     state_.config.data.group_columns);
  write_forecast_svg(out / "forecast.svg", state_.dataset, predictions, state_.config.data.target);
  write_interpretation_files(out, predictions.interpretation);
  report.memory = trainer_.memory_report();
  write_file_atomically(out / "summary.json", summary_json(report).dump(2) + "\n");
}

}  // namespace tft
