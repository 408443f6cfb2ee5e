// tft_backtest_*: a rolling-origin backtest of a config (train/backtest.h), and its report read
// through getters into growing structs.
#include "handles.h"
#include "report_handle.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "train/backtest.h"

struct tft_backtest_report {
  static constexpr std::uint64_t kMagic = 0x74666274727074ULL;  // "tfbtrpt"
  static constexpr const char* kTypeName = "tft_backtest_report";
  tft_backtest_summary summary{};
  // Index 0: pooled; 1...: the folds. Each: model, naive, seasonal naive.
  std::vector<std::array<tft_metrics, 3>> metrics;
};

using tft::capi::live;
using tft::capi::require;

namespace {

std::array<tft_metrics, 3> metrics_of(const tft::ValidationMetrics& model,
                                      const tft::ValidationMetrics& naive,
                                      const tft::ValidationMetrics& seasonal) {
  return {tft::capi::to_c(model), tft::capi::to_c(naive), tft::capi::to_c(seasonal)};
}

tft_backtest_report* make_report(const tft::BacktestReport& r) {
  auto handle = std::make_unique<tft_backtest_report>();
  tft_backtest_summary& s = handle->summary;
  s.struct_size = sizeof s;
  s.folds = r.folds;
  s.finished_folds = static_cast<std::int64_t>(r.finished.size());
  s.folds_beating_naive = r.folds_beating_naive();
  s.interval_coverage = r.model.interval_coverage;
  s.seconds = r.seconds;
  handle->metrics.push_back(metrics_of(r.model, r.naive, r.seasonal_naive));
  for (const tft::BacktestFoldResult& f : r.finished) {
    handle->metrics.push_back(metrics_of(f.model, f.naive, f.seasonal_naive));
  }
  return tft::capi::publish(std::move(handle));
}

}  // namespace

extern "C" {

tft_status tft_backtest_run(const tft_config* config, tft_progress_fn fn, void* user,
                            tft_backtest_report** out) {
  TFT_API_BEGIN
  const auto* source = live(config, __func__, "config");
  tft::BacktestProgress progress;
  if (fn != nullptr) {
    progress = [fn, user](std::int64_t fold, std::int64_t folds, const tft::TrainProgress& p) {
      const tft_progress c = tft::capi::to_c(p, fold, folds);
      return fn(&c, user) == 0;
    };
  }
  const tft::BacktestReport report = tft::run_backtest(source->config, progress);
  if (out != nullptr) *out = make_report(report);
  TFT_API_END
}

void tft_backtest_report_free(tft_backtest_report* report) { tft::capi::destroy(report); }

tft_status tft_backtest_report_get_summary(const tft_backtest_report* report,
                                           tft_backtest_summary* out) {
  TFT_API_BEGIN
  const tft_backtest_report* handle = live(report, __func__, "report");
  tft::capi::require_struct(out, __func__, "out");
  tft::capi::fill_struct(out, handle->summary);
  TFT_API_END
}

tft_status tft_backtest_report_get_metrics(const tft_backtest_report* report, int64_t fold,
                                           tft_forecaster forecaster, tft_metrics* out) {
  TFT_API_BEGIN
  const tft_backtest_report* handle = live(report, __func__, "report");
  tft::capi::require_struct(out, __func__, "out");
  const auto folds = static_cast<int64_t>(handle->metrics.size()) - 1;
  if (fold < 0 || fold > folds) {
    throw tft::InvalidArgumentError(std::string(__func__) + ": fold " + std::to_string(fold) +
                                    " is not 0 (every fold) or 1 ... " + std::to_string(folds));
  }
  const int which = static_cast<int>(forecaster);
  if (which < 0 || which > 2) {
    throw tft::InvalidArgumentError(std::string(__func__) + ": forecaster " +
                                    std::to_string(which) + " is not a tft_forecaster");
  }
  tft::capi::fill_struct(
      out, handle->metrics[static_cast<std::size_t>(fold)][static_cast<std::size_t>(which)]);
  TFT_API_END
}

}  // extern "C"
