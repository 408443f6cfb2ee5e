#include "progress_printer.h"

#include <cmath>
#include <cstdio>

#include <unistd.h>

#include "common/format.h"  // format_bytes

namespace tft {

namespace {

std::string metric(const char* name, double value, const char* format) {
  if (!std::isfinite(value)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return std::string("  ") + name + " " + buf;
}

}  // namespace

std::string epoch_line(const TrainProgress& p) {
  char head[96];
  std::snprintf(head, sizeof head, "epoch %lld/%lld", static_cast<long long>(p.epoch),
                static_cast<long long>(p.epochs));
  std::string line = head;
  const EpochMetrics* m = p.metrics;
  if (m == nullptr) return line;
  line += metric("train", m->train_loss, "%.4f");
  line += metric("val", m->validation.loss, "%.4f");
  line += metric("q-risk P50", m->validation.q_risk_p50, "%.4f");
  if (p.baselines != nullptr && std::isfinite(p.baselines->naive.q_risk_p50)) {
    // The baselines' P50 beside the model's: "(naive 0.0136, seasonal 0.0181)".
    char beside[96];
    std::snprintf(beside, sizeof beside, " (naive %.4f", p.baselines->naive.q_risk_p50);
    line += beside;
    if (p.baselines->seasonal_naive.windows > 0) {
      std::snprintf(beside, sizeof beside, ", seasonal %.4f",
                    p.baselines->seasonal_naive.q_risk_p50);
      line += beside;
    }
    line += ")";
  }
  line += metric("P90", m->validation.q_risk_p90, "%.4f");
  line += metric("MAE P50", m->validation.mae_p50, "%.4g");
  line += metric("coverage", 100.0 * m->validation.interval_coverage, "%.0f%%");
  line += metric("lr", m->learning_rate, "%.3g");
  line += metric("samples/s", m->samples_per_second, "%.0f");
  line += "  act " + format_bytes(m->peak_activation_bytes);
  if (m->best) line += "  *";
  return line;
}

ProgressPrinter::ProgressPrinter(std::FILE* out)
    : ProgressPrinter(out, out != nullptr && ::isatty(::fileno(out)) != 0) {}

ProgressPrinter::ProgressPrinter(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

void ProgressPrinter::end_line() {
  if (out_ != nullptr && terminal_ && last_width_ > 0) {
    std::fprintf(out_, "\n");
    std::fflush(out_);
  }
  last_width_ = 0;
}

bool ProgressPrinter::operator()(const TrainProgress& p) {
  if (out_ == nullptr) return true;
  if (p.kind == TrainProgress::Kind::Epoch) {
    std::string line = epoch_line(p);
    if (terminal_) {
      // Overwrite the bar completely.
      const std::size_t width = line.size();
      if (width < last_width_) line.append(last_width_ - width, ' ');
      std::fprintf(out_, "\r%s\n", line.c_str());
      last_width_ = 0;
    } else {
      std::fprintf(out_, "%s\n", line.c_str());
    }
    std::fflush(out_);
    return true;
  }
  if (!terminal_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (p.step != p.steps && now - last_draw_ < std::chrono::milliseconds(100)) return true;
  last_draw_ = now;
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "epoch %lld/%lld  step %lld/%lld  loss %.4f  %.0f samples/s  act %s",
                static_cast<long long>(p.epoch), static_cast<long long>(p.epochs),
                static_cast<long long>(p.step), static_cast<long long>(p.steps), p.loss,
                p.samples_per_second, format_bytes(p.peak_activation_bytes).c_str());
  std::string line = buf;
  const std::size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  last_width_ = width;
  std::fprintf(out_, "\r%s", line.c_str());
  std::fflush(out_);
  return true;
}

}  // namespace tft
