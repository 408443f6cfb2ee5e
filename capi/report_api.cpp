// tft_train_report_*: how a training run ended, read through getters into growing structs.
#include "report_handle.h"

#include <limits>
#include <memory>

namespace tft::capi {

// The C structs in their fields' order, struct_size first.
tft_metrics to_c(const ValidationMetrics& m) {
  return tft_metrics{sizeof(tft_metrics), m.loss, m.q_risk_p50, m.q_risk_p90, m.mae_p50, m.windows};
}

tft_memory_report to_c(const MemoryReport& m) {
  return tft_memory_report{sizeof(tft_memory_report),
                           m.checkpointed_peak_bytes,
                           m.unchecked_peak_bytes,
                           m.measured_savings,
                           m.predicted_savings,
                           m.predicted_compute_overhead,
                           m.num_units};
}

tft_train_report* make_train_report(const TrainReport& r) {
  auto handle = std::make_unique<tft_train_report>();
  tft_train_summary& s = handle->summary;
  s.struct_size = sizeof s;
  s.epochs_run = r.epochs_run;
  s.best_epoch = r.best_epoch;
  s.resumed_from_epoch = r.resumed_from_epoch;
  s.early_stopped = r.early_stopped ? 1 : 0;
  s.initial_validation_loss = r.initial_validation_loss;
  s.best_validation_loss = r.best_validation_loss;
  s.final_validation_loss = r.final_validation_loss;
  s.final_train_loss =
      r.history.empty() ? std::numeric_limits<double>::quiet_NaN() : r.history.back().train_loss;
  s.train_seconds = r.train_seconds;
  s.samples_per_second = r.samples_per_second;
  s.peak_activation_bytes = r.peak_activation_bytes;
  handle->validation = to_c(r.validation);
  handle->memory = to_c(r.memory);
  return publish(std::move(handle));
}

}  // namespace tft::capi

namespace {

// Copies one of the report's structs into the caller's (by its struct_size).
template <typename Struct, typename Field>
tft_status get(const tft_train_report* report, Struct* out, Field field, const char* function) {
  TFT_API_BEGIN
  const tft_train_report* handle = tft::capi::live(report, function, "report");
  tft::capi::require_struct(out, function, "out");
  tft::capi::fill_struct(out, handle->*field);
  TFT_API_END_AS(function)
}

}  // namespace

extern "C" {

void tft_train_report_free(tft_train_report* report) { tft::capi::destroy(report); }

tft_status tft_train_report_get_summary(const tft_train_report* report, tft_train_summary* out) {
  return get(report, out, &tft_train_report::summary, __func__);
}

tft_status tft_train_report_get_validation(const tft_train_report* report, tft_metrics* out) {
  return get(report, out, &tft_train_report::validation, __func__);
}

tft_status tft_train_report_get_memory(const tft_train_report* report, tft_memory_report* out) {
  return get(report, out, &tft_train_report::memory, __func__);
}

}  // extern "C"
