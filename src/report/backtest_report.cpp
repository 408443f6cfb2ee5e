#include "report/backtest_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report/summary.h"
#include "report/svg_util.h"

namespace tft {

std::int64_t BacktestReport::folds_beating_naive() const {
  return std::count_if(finished.begin(), finished.end(), [](const BacktestFoldResult& f) {
    return f.model.q_risk_p50 < f.naive.q_risk_p50;
  });
}

nlohmann::ordered_json backtest_report_to_json(const BacktestReport& r) {
  using J = nlohmann::ordered_json;
  J per_fold = J::array();
  for (const BacktestFoldResult& f : r.finished) {
    per_fold.push_back(
        J{{"fold", f.fold},
          {"origin", f.origin},
          {"series", f.series},
          {"model", validation_metrics_to_json(f.model)},
          {"naive", validation_metrics_to_json(f.naive)},
          {"seasonal_naive",
           f.seasonal_naive.windows > 0 ? validation_metrics_to_json(f.seasonal_naive) : J()},
          {"seasonality", f.seasonality},
          {"epochs_run", f.epochs_run},
          {"train_seconds", f.train_seconds},
          {"started_from", f.started_from}});
  }
  return J{{"mode", r.mode},
           {"folds", r.folds},
           {"finished_folds", static_cast<std::int64_t>(r.finished.size())},
           {"folds_beating_naive", r.folds_beating_naive()},
           {"seconds", r.seconds},
           {"overall",
            {{"model", validation_metrics_to_json(r.model)},
             {"naive", validation_metrics_to_json(r.naive)},
             {"seasonal_naive",
              r.seasonal_naive.windows > 0 ? validation_metrics_to_json(r.seasonal_naive) : J()}}},
           {"per_fold", per_fold},
           {"output_directory", r.output_directory}};
}

std::string backtest_summary_text(const BacktestReport& r) {
  std::string out = "Backtest summary (" + r.mode + ", " + std::to_string(r.finished.size()) +
                    " of " + std::to_string(r.folds) + " folds)\n";
  out +=
      "  fold  origin                series  P50 model  naive   seasonal  P90 model  "
      "coverage  epochs  train s\n";
  for (const BacktestFoldResult& f : r.finished) {
    char line[256];
    std::snprintf(line, sizeof line, "  %4lld  %-20s  %6lld  %9s  %6s  %8s  %9s  %8s  %6lld  %7s\n",
                  static_cast<long long>(f.fold), f.origin.c_str(),
                  static_cast<long long>(f.series), figure_text(f.model.q_risk_p50, "%.4f").c_str(),
                  figure_text(f.naive.q_risk_p50, "%.4f").c_str(),
                  figure_text(f.seasonal_naive.q_risk_p50, "%.4f").c_str(),
                  figure_text(f.model.q_risk_p90, "%.4f").c_str(),
                  percent_text(f.model.interval_coverage).c_str(),
                  static_cast<long long>(f.epochs_run),
                  figure_text(f.train_seconds, "%.1f").c_str());
    out += line;
  }
  auto line = [&](const std::string& name, const std::string& value) {
    out += "  " + name + std::string(name.size() < 34 ? 34 - name.size() : 1, ' ') + value + "\n";
  };
  line("overall: q-risk P50, P90",
       figure_text(r.model.q_risk_p50, "%.4f") + ", " + figure_text(r.model.q_risk_p90, "%.4f"));
  line("overall: interval coverage", percent_text(r.model.interval_coverage));
  line("naive forecast: q-risk P50, P90",
       figure_text(r.naive.q_risk_p50, "%.4f") + ", " + figure_text(r.naive.q_risk_p90, "%.4f"));
  if (r.seasonal_naive.windows > 0) {
    line("seasonal naive: q-risk P50, P90", figure_text(r.seasonal_naive.q_risk_p50, "%.4f") +
                                                ", " +
                                                figure_text(r.seasonal_naive.q_risk_p90, "%.4f"));
  }
  line("folds beating the naive forecast",
       std::to_string(r.folds_beating_naive()) + " of " + std::to_string(r.finished.size()));
  line("wall time", figure_text(r.seconds, "%.1f") + " s");
  line("output", r.output_directory);
  return out;
}

std::string backtest_svg(const BacktestReport& r) {
  using svg::kPlotLeft;
  using svg::kPlotRight;
  using svg::num;
  constexpr int kWidth = 720;
  constexpr double kTop = 34, kPanel = 220, kGap = 60, kCoverage = 120, kBottom = 40;
  const double plot_width = kWidth - kPlotLeft - kPlotRight;
  const std::size_t n = std::max<std::size_t>(r.finished.size(), 1);
  auto x_of = [&](std::size_t i) { return kPlotLeft + plot_width * (i + 0.5) / n; };

  struct Line {
    const char* name;
    const char* colour;
    std::vector<double> values;
  };
  std::vector<Line> lines = {
      {"model P50", "#2f6db5", {}}, {"naive", "#888888", {}}, {"seasonal naive", "#e07b20", {}}};
  double hi = 0.0;
  for (const BacktestFoldResult& f : r.finished) {
    lines[0].values.push_back(f.model.q_risk_p50);
    lines[1].values.push_back(f.naive.q_risk_p50);
    lines[2].values.push_back(f.seasonal_naive.windows > 0 ? f.seasonal_naive.q_risk_p50 : NAN);
    for (const Line& l : lines) {
      if (std::isfinite(l.values.back())) hi = std::max(hi, l.values.back());
    }
  }
  const std::vector<double> ticks = svg::nice_ticks(0.0, hi > 0 ? hi * 1.1 : 1.0, 5);
  const double top_value = ticks.empty() ? 1.0 : std::max(ticks.back(), hi);
  auto y_of = [&](double v) { return kTop + kPanel * (1.0 - v / top_value); };
  const double coverage_top = kTop + kPanel + kGap;
  auto y_cov = [&](double share) { return coverage_top + kCoverage * (1.0 - share); };

  std::ostringstream s;
  svg::open_svg(s, kWidth, coverage_top + kCoverage + kBottom);
  s << "<text x=\"" << num(kPlotLeft) << "\" y=\"18\" font-size=\"13\">Backtest (" << r.mode
    << "): P50 q-risk per fold, lower is better</text>\n";
  for (double t : ticks) {
    s << "<line x1=\"" << num(kPlotLeft) << "\" x2=\"" << num(kWidth - kPlotRight) << "\" y1=\""
      << num(y_of(t)) << "\" y2=\"" << num(y_of(t)) << "\" stroke=\"#e5e5e5\"/>\n"
      << "<text x=\"" << num(kPlotLeft - 6) << "\" y=\"" << num(y_of(t) + 4)
      << "\" text-anchor=\"end\">" << svg::tick_label(t) << "</text>\n";
  }
  for (std::size_t i = 0; i < r.finished.size(); ++i) {
    s << "<text x=\"" << num(x_of(i)) << "\" y=\"" << num(kTop + kPanel + 16)
      << "\" text-anchor=\"middle\">fold " << r.finished[i].fold << "</text>\n";
  }
  for (std::size_t l = 0; l < lines.size(); ++l) {
    std::string points;
    for (std::size_t i = 0; i < lines[l].values.size(); ++i) {
      const double v = lines[l].values[i];
      if (!std::isfinite(v)) continue;
      points += num(x_of(i)) + "," + num(y_of(v)) + " ";
      s << "<circle cx=\"" << num(x_of(i)) << "\" cy=\"" << num(y_of(v)) << "\" r=\"3.5\" fill=\""
        << lines[l].colour << "\"><title>fold " << r.finished[i].fold << " " << lines[l].name
        << ": " << svg::tick_label(v) << "</title></circle>\n";
    }
    if (!points.empty()) {
      s << "<polyline points=\"" << points << "\" fill=\"none\" stroke=\"" << lines[l].colour
        << "\" stroke-width=\"1.8\"/>\n";
    }
    const double legend_x = kPlotLeft + 10 + 130.0 * static_cast<double>(l);
    s << "<rect x=\"" << num(legend_x) << "\" y=\"" << num(kTop + 4) << "\" width=\"10\" "
      << "height=\"10\" fill=\"" << lines[l].colour << "\"/><text x=\"" << num(legend_x + 14)
      << "\" y=\"" << num(kTop + 13) << "\">" << lines[l].name << "</text>\n";
  }
  // Coverage: bars against the 80% line (P10-P90 with the default quantiles).
  s << "<text x=\"" << num(kPlotLeft) << "\" y=\"" << num(coverage_top - 10)
    << "\" font-size=\"13\">Interval coverage per fold (the lowest to the highest quantile; "
       "80% for P10-P90)</text>\n";
  for (double t : {0.0, 0.5, 0.8, 1.0}) {
    s << "<line x1=\"" << num(kPlotLeft) << "\" x2=\"" << num(kWidth - kPlotRight) << "\" y1=\""
      << num(y_cov(t)) << "\" y2=\"" << num(y_cov(t)) << "\" stroke=\""
      << (t == 0.8 ? "#c0392b" : "#e5e5e5") << "\"/>\n<text x=\"" << num(kPlotLeft - 6) << "\" y=\""
      << num(y_cov(t) + 4) << "\" text-anchor=\"end\">" << static_cast<int>(t * 100)
      << "%</text>\n";
  }
  const double bar = plot_width / static_cast<double>(n) * 0.5;
  for (std::size_t i = 0; i < r.finished.size(); ++i) {
    const double c = r.finished[i].model.interval_coverage;
    if (!std::isfinite(c)) continue;
    s << "<rect x=\"" << num(x_of(i) - bar / 2) << "\" y=\"" << num(y_cov(c)) << "\" width=\""
      << num(bar) << "\" height=\"" << num(y_cov(0.0) - y_cov(c)) << "\" fill=\"#2f6db5\" "
      << "opacity=\"0.7\"><title>fold " << r.finished[i].fold << ": " << percent_text(c)
      << "</title></rect>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace tft
