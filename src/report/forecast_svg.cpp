#include "report/forecast_svg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "common/atomic_file.h"
#include "report/metrics.h"
#include "report/svg_util.h"

namespace tft {

namespace {

constexpr const char* kActualColour = "#222222";
constexpr const char* kForecastColour = "#2f6db5";
constexpr const char* kFutureColour = "#e07b20";
constexpr double kTop = 30, kBottom = 34;

using svg::kPlotLeft;
using svg::kPlotRight;
using svg::nice_ticks;
using svg::num;
using svg::tick_label;
using svg::xml_escape;

struct Panel {
  std::size_t series = 0;
  std::vector<const Forecast*> tiles;  // validation windows, not overlapping
  const Forecast* future = nullptr;
};

}  // namespace

std::string forecast_svg(const TimeSeriesDataset& dataset, const Predictions& predictions,
                         const std::string& target, const ForecastPlotOptions& options) {
  const std::size_t nq = predictions.quantiles.size();
  const std::size_t lo_q = quantile_index(predictions.quantiles, 0.1).value_or(0);
  const std::size_t hi_q = quantile_index(predictions.quantiles, 0.9).value_or(nq - 1);
  const std::size_t mid_q = quantile_index(predictions.quantiles, 0.5).value_or(nq / 2);
  const std::size_t n_series = dataset.series().size();
  const std::size_t count = std::min(options.max_panels, n_series);
  const std::int64_t steps = dataset.prediction_length();

  std::vector<Panel> panels;
  for (std::size_t k = 0; k < count; ++k) {
    Panel p;
    p.series = count == n_series || count < 2
                   ? k
                   : static_cast<std::size_t>(
                         std::llround(static_cast<double>(k) * static_cast<double>(n_series - 1) /
                                      static_cast<double>(count - 1)));
    // Tiles chosen from the last validation window backwards, so they reach the data's end.
    std::int64_t covered = std::numeric_limits<std::int64_t>::max();
    for (auto it = predictions.forecasts.rbegin(); it != predictions.forecasts.rend(); ++it) {
      const Forecast& f = *it;
      if (f.series != p.series || f.times.empty()) continue;
      if (f.future) {
        p.future = &f;
      } else if (f.times.back() < covered) {
        p.tiles.push_back(&f);
        covered = f.times.front();
      }
    }
    std::reverse(p.tiles.begin(), p.tiles.end());
    panels.push_back(p);
  }

  const double width = options.width;
  const double panel_h = options.panel_height;
  const double legend_h = 44;
  const double height = legend_h + panel_h * static_cast<double>(panels.size()) + 6;
  std::ostringstream svg;
  svg::open_svg(svg, options.width, height);
  svg << "<text x=\"" << num(kPlotLeft) << "\" y=\"18\" font-size=\"14\" font-weight=\"bold\">"
      << xml_escape(options.title) << " (" << xml_escape(target) << ")</text>\n";
  // Legend.
  double lx = kPlotLeft;
  const double ly = 34;
  auto legend_line = [&](const char* colour, const std::string& label, bool band) {
    if (band) {
      svg << "<rect x=\"" << num(lx) << "\" y=\"" << num(ly - 6) << "\" width=\"22\" height=\"10\""
          << " fill=\"" << colour << "\" fill-opacity=\"0.25\"/>\n";
    } else {
      svg << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly - 1) << "\" x2=\"" << num(lx + 22)
          << "\" y2=\"" << num(ly - 1) << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>\n";
    }
    svg << "<text x=\"" << num(lx + 27) << "\" y=\"" << num(ly + 3) << "\">" << xml_escape(label)
        << "</text>\n";
    lx += 32 + 7.0 * static_cast<double>(label.size());
  };
  const auto q_name = [&](std::size_t q) {
    return "P" + tick_label(predictions.quantiles.empty() ? 0.0 : predictions.quantiles[q] * 100);
  };
  legend_line(kActualColour, "actual", false);
  legend_line(kForecastColour, "forecast " + q_name(mid_q), false);
  legend_line(kForecastColour, q_name(lo_q) + "-" + q_name(hi_q) + " band", true);
  legend_line(kFutureColour, "after the data", false);

  for (std::size_t k = 0; k < panels.size(); ++k) {
    const Panel& panel = panels[k];
    const SeriesInfo& info = dataset.series()[panel.series];
    const auto first_row = static_cast<std::size_t>(info.offset);
    const std::int64_t len = info.length;
    const std::vector<std::int64_t>& all_times = dataset.times();
    const std::int64_t* times = all_times.data() + first_row;
    const std::vector<float>& target_column = dataset.real_column(target);
    const std::int64_t validation_rows = len - info.train_rows;
    const std::int64_t context = validation_rows > 0
                                     ? std::max<std::int64_t>(2 * steps, validation_rows / 2)
                                     : std::max<std::int64_t>(dataset.encoder_length(), 2 * steps);
    const std::int64_t r0 = std::max<std::int64_t>(0, info.train_rows - context);
    const std::int64_t r1 = len + (panel.future ? steps : 0);  // exclusive
    // Row position of a forecast time (future steps follow the last row).
    auto position = [&](const Forecast& f, std::size_t h) -> double {
      if (f.future) return static_cast<double>(len) + static_cast<double>(h);
      const std::int64_t* it = std::lower_bound(times, times + len, f.times[h]);
      return static_cast<double>(it - times);
    };

    double y_lo = std::numeric_limits<double>::infinity(), y_hi = -y_lo;
    auto widen = [&](float v) {
      if (std::isfinite(v)) {
        y_lo = std::min(y_lo, static_cast<double>(v));
        y_hi = std::max(y_hi, static_cast<double>(v));
      }
    };
    for (std::int64_t r = r0; r < len; ++r)
      widen(target_column[first_row + static_cast<std::size_t>(r)]);
    std::vector<const Forecast*> drawn = panel.tiles;
    if (panel.future) drawn.push_back(panel.future);
    for (const Forecast* f : drawn) {
      for (std::size_t h = 0; h < f->times.size(); ++h) {
        widen(f->value(h, lo_q, nq));
        widen(f->value(h, hi_q, nq));
      }
    }
    if (!std::isfinite(y_lo)) y_lo = 0, y_hi = 1;
    if (y_hi - y_lo < 1e-9) y_lo -= 1, y_hi += 1;
    const double pad = 0.06 * (y_hi - y_lo);
    y_lo -= pad;
    y_hi += pad;

    const double top = legend_h + panel_h * static_cast<double>(k);
    const double px0 = kPlotLeft, px1 = width - kPlotRight;
    const double py0 = top + kTop, py1 = top + panel_h - kBottom;
    const double span = std::max<double>(1.0, static_cast<double>(r1 - 1 - r0));
    auto X = [&](double row) { return px0 + (row - static_cast<double>(r0)) / span * (px1 - px0); };
    auto Y = [&](double v) { return py1 - (v - y_lo) / (y_hi - y_lo) * (py1 - py0); };

    svg << "<g>\n<text x=\"" << num(px0) << "\" y=\"" << num(top + 20)
        << "\" font-size=\"12\" font-weight=\"bold\">series "
        << xml_escape(series_label(dataset, panel.series)) << "</text>\n";
    svg << "<rect x=\"" << num(px0) << "\" y=\"" << num(py0) << "\" width=\"" << num(px1 - px0)
        << "\" height=\"" << num(py1 - py0) << "\" fill=\"none\" stroke=\"#999\"/>\n";
    for (double t : nice_ticks(y_lo, y_hi, 4)) {
      svg << "<line x1=\"" << num(px0) << "\" y1=\"" << num(Y(t)) << "\" x2=\"" << num(px1)
          << "\" y2=\"" << num(Y(t)) << "\" stroke=\"#e6e6e6\"/>\n";
      svg << "<text x=\"" << num(px0 - 6) << "\" y=\"" << num(Y(t) + 4) << "\" text-anchor=\"end\">"
          << tick_label(t) << "</text>\n";
    }
    // Time labels at the start, the validation start, the end of the data and the last step.
    std::vector<std::pair<double, std::string>> labels;
    labels.emplace_back(static_cast<double>(r0), dataset.format_time(times[r0]));
    if (validation_rows > 0 && info.train_rows > r0) {
      labels.emplace_back(static_cast<double>(info.train_rows),
                          dataset.format_time(times[info.train_rows]));
    }
    if (panel.future) {
      labels.emplace_back(static_cast<double>(r1 - 1),
                          dataset.format_time(panel.future->times.back()));
    } else {
      labels.emplace_back(static_cast<double>(len - 1), dataset.format_time(times[len - 1]));
    }
    double last_label_x = -1e9;
    for (const auto& [row, text] : labels) {
      const double x = X(row);
      if (x - last_label_x < 120) continue;  // no overlapping labels
      svg << "<line x1=\"" << num(x) << "\" y1=\"" << num(py1) << "\" x2=\"" << num(x) << "\" y2=\""
          << num(py1 + 4) << "\" stroke=\"#999\"/>\n";
      svg << "<text x=\"" << num(x) << "\" y=\"" << num(py1 + 16) << "\" text-anchor=\""
          << (x > px1 - 60 ? "end" : "middle") << "\">" << xml_escape(text) << "</text>\n";
      last_label_x = x;
    }
    auto vertical = [&](double row, const char* colour) {
      svg << "<line x1=\"" << num(X(row)) << "\" y1=\"" << num(py0) << "\" x2=\"" << num(X(row))
          << "\" y2=\"" << num(py1) << "\" stroke=\"" << colour
          << "\" stroke-dasharray=\"4 3\"/>\n";
    };
    if (validation_rows > 0 && info.train_rows > r0) {
      vertical(static_cast<double>(info.train_rows) - 0.5, "#888");
    }
    if (panel.future) vertical(static_cast<double>(len) - 0.5, kFutureColour);

    // Bands and medians: contiguous windows joined into one polygon / polyline each.
    struct Point {
      double row, lo, mid, hi;
    };
    std::vector<std::vector<Point>> runs;
    std::vector<bool> run_is_future;
    for (const Forecast* f : drawn) {
      for (std::size_t h = 0; h < f->times.size(); ++h) {
        const Point point{position(*f, h), f->value(h, lo_q, nq), f->value(h, mid_q, nq),
                          f->value(h, hi_q, nq)};
        if (runs.empty() || run_is_future.back() != f->future ||
            point.row != runs.back().back().row + 1) {
          runs.emplace_back();
          run_is_future.push_back(f->future);
        }
        runs.back().push_back(point);
      }
    }
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const char* colour = run_is_future[k] ? kFutureColour : kForecastColour;
      std::ostringstream band, median;
      for (const Point& p : runs[k]) {
        band << num(X(p.row)) << ',' << num(Y(p.hi)) << ' ';
        median << num(X(p.row)) << ',' << num(Y(p.mid)) << ' ';
      }
      for (auto p = runs[k].rbegin(); p != runs[k].rend(); ++p) {
        band << num(X(p->row)) << ',' << num(Y(p->lo)) << ' ';
      }
      svg << "<polygon points=\"" << band.str() << "\" fill=\"" << colour
          << "\" fill-opacity=\"0.25\" stroke=\"none\"/>\n";
      svg << "<polyline points=\"" << median.str() << "\" fill=\"none\" stroke=\"" << colour
          << "\" stroke-width=\"1.6\"/>\n";
    }
    // The actual target.
    std::ostringstream actual;
    for (std::int64_t r = r0; r < len; ++r) {
      const float v = target_column[first_row + static_cast<std::size_t>(r)];
      if (std::isfinite(v)) actual << num(X(static_cast<double>(r))) << ',' << num(Y(v)) << ' ';
    }
    svg << "<polyline points=\"" << actual.str() << "\" fill=\"none\" stroke=\"" << kActualColour
        << "\" stroke-width=\"1.1\"/>\n</g>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

void write_forecast_svg(const std::filesystem::path& path, const TimeSeriesDataset& dataset,
                        const Predictions& predictions, const std::string& target,
                        const ForecastPlotOptions& options) {
  write_file_atomically(path, forecast_svg(dataset, predictions, target, options));
}

}  // namespace tft
