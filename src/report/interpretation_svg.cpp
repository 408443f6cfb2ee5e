#include "report/interpretation_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <vector>

#include "common/atomic_file.h"
#include "report/summary.h"
#include "report/svg_util.h"

namespace tft {

namespace {

using svg::kPlotLeft;
using svg::kPlotRight;
using svg::nice_ticks;
using svg::num;
using svg::tick_label;
using svg::xml_escape;

constexpr const char* kLineColour = "#2f6db5";
constexpr const char* kBarColour = "#2f6db5";
constexpr const char* kNoteColour = "#666666";
constexpr const char* kWarningColour = "#b03030";
constexpr double kCharWidth = 7;     // a generous mean width of a name's letters
constexpr double kPercentRoom = 52;  // right of the longest bar, for its percentage
constexpr double kRowHeight = 20, kBarHeight = 13;
constexpr double kTitleHeight = 28;  // a panel's title line
constexpr double kAttentionHeight = 270;
constexpr double kGap = 16;  // between panels
constexpr std::int64_t kMaxDots = 48;

struct Bar {
  std::string name;
  double percent = 0.0;
  bool finite = true;
};

// Percentages of the group's finite total, largest first (ties in schema order), then the
// non-finite ones.
std::vector<Bar> sorted_bars(const std::vector<VariableImportance>& list) {
  double total = 0.0;
  for (const VariableImportance& v : list) {
    if (std::isfinite(v.importance)) total += std::max(0.0, v.importance);
  }
  std::vector<Bar> bars;
  for (const VariableImportance& v : list) {
    Bar bar{v.variable, 0.0, static_cast<bool>(std::isfinite(v.importance))};
    if (bar.finite && total > 0) bar.percent = 100.0 * std::max(0.0, v.importance) / total;
    bars.push_back(bar);
  }
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) {
    if (a.finite != b.finite) return a.finite;
    return a.percent > b.percent;
  });
  return bars;
}

std::string count_text(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

void panel_title(std::ostream& out, double x0, double x1, double top, const std::string& title,
                 const std::string& warning) {
  out << "<text x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(top + 18)
      << "\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">" << xml_escape(title)
      << "</text>\n";
  if (!warning.empty()) {
    out << "<text x=\"" << num(x1) << "\" y=\"" << num(top + 18) << "\" text-anchor=\"end\" fill=\""
        << kWarningColour << "\">" << xml_escape(warning) << "</text>\n";
  }
}

// One group's bars from `top`; returns the panel's height.
double importance_panel(std::ostream& out, const std::string& id, const std::string& title,
                        const char* empty_note, const std::vector<VariableImportance>& list,
                        double width, double bar_left, std::size_t max_name_chars, double top) {
  const std::vector<Bar> bars = sorted_bars(list);
  const double px0 = bar_left, px1 = width - kPlotRight - kPercentRoom;
  const auto non_finite = static_cast<std::size_t>(
      std::count_if(bars.begin(), bars.end(), [](const Bar& b) { return !b.finite; }));
  out << "<g id=\"" << id << "\" class=\"panel\">\n";
  panel_title(
      out, px0, px1 + kPercentRoom, top, title,
      non_finite > 0 ? count_text(non_finite, "non-finite importance") + " shown as n/a" : "");
  if (bars.empty()) {
    out << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(top + kTitleHeight + 16)
        << "\" text-anchor=\"middle\" fill=\"" << kNoteColour << "\">" << empty_note
        << "</text>\n</g>\n";
    return kTitleHeight + 30;
  }
  double max_percent = 0.0;
  for (const Bar& b : bars) max_percent = std::max(max_percent, b.percent);
  // The axis ends at the first round tick at or past the largest bar.
  const std::vector<double> probe = nice_ticks(0.0, max_percent > 0 ? max_percent : 100.0, 5);
  const double step = probe.size() > 1 ? probe[1] - probe[0] : 100.0;
  const double axis_max =
      max_percent > 0 ? std::max(step, std::ceil(max_percent / step - 1e-9) * step) : 100.0;
  auto X = [&](double percent) { return px0 + percent / axis_max * (px1 - px0); };

  const double rows_top = top + kTitleHeight;
  const double axis_y = rows_top + kRowHeight * static_cast<double>(bars.size()) + 2;
  for (double t = 0.0; t <= axis_max * (1 + 1e-9); t += step) {
    out << "<line x1=\"" << num(X(t)) << "\" y1=\"" << num(rows_top) << "\" x2=\"" << num(X(t))
        << "\" y2=\"" << num(axis_y + 4) << "\" stroke=\"" << (t == 0.0 ? "#999" : "#e6e6e6")
        << "\"/>\n";
    out << "<text x=\"" << num(X(t)) << "\" y=\"" << num(axis_y + 16)
        << "\" text-anchor=\"middle\">" << tick_label(t) << "</text>\n";
  }
  out << "<line x1=\"" << num(px0) << "\" y1=\"" << num(axis_y) << "\" x2=\"" << num(px1)
      << "\" y2=\"" << num(axis_y) << "\" stroke=\"#999\"/>\n";
  out << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(axis_y + 32)
      << "\" text-anchor=\"middle\">Importance in %</text>\n";
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& bar = bars[i];
    const double y = rows_top + kRowHeight * static_cast<double>(i) + (kRowHeight - kBarHeight) / 2;
    const std::string value = bar.finite ? percent_text(bar.percent / 100.0) : "n/a";
    const double bar_width = X(bar.percent) - px0;
    out << "<g class=\"bar\"><title>" << xml_escape(bar.name + ": " + value) << "</title>\n";
    out << "<text class=\"name\" x=\"" << num(px0 - 8) << "\" y=\"" << num(y + kBarHeight - 3)
        << "\" text-anchor=\"end\">" << xml_escape(svg::shorten(bar.name, max_name_chars))
        << "</text>\n";
    out << "<rect x=\"" << num(px0) << "\" y=\"" << num(y) << "\" width=\"" << num(bar_width)
        << "\" height=\"" << num(kBarHeight) << "\" fill=\"" << kBarColour << "\"/>\n";
    out << "<text class=\"value\" x=\"" << num(px0 + bar_width + 4) << "\" y=\""
        << num(y + kBarHeight - 3) << "\""
        << (bar.finite ? "" : std::string(" fill=\"") + kWarningColour + "\"") << ">" << value
        << "</text>\n</g>\n";
  }
  out << "</g>\n";
  return axis_y + 40 - top;
}

// The attention by encoder position from `top`; returns the panel's height.
double attention_panel(std::ostream& out, const Interpretation& interpretation, double width,
                       double top) {
  const std::int64_t positions =
      static_cast<std::int64_t>(interpretation.attention_by_position.size());
  const std::int64_t e = std::clamp<std::int64_t>(interpretation.encoder_length, 0, positions);
  std::size_t non_finite = 0;
  double total = 0.0, encoder_total = 0.0;
  std::vector<double> values;
  for (std::int64_t k = 0; k < positions; ++k) {
    double v = interpretation.attention_by_position[static_cast<std::size_t>(k)];
    if (!std::isfinite(v)) {
      ++non_finite;
      v = 0.0;
    }
    total += v;
    if (k < e) {
      encoder_total += v;
      values.push_back(v);
    }
  }
  if (encoder_total > 0) {
    for (double& v : values) v /= encoder_total;
  }
  double y_hi = 0.0;
  for (double v : values) y_hi = std::max(y_hi, v);
  y_hi = y_hi > 0 ? y_hi * 1.08 : 1.0;

  const double px0 = kPlotLeft, px1 = width - kPlotRight;
  const double py0 = top + 46, py1 = top + kAttentionHeight - 42;
  const double span = static_cast<double>(std::max<std::int64_t>(1, e - 1));
  auto X = [&](double position) {
    return e == 1 ? (px0 + px1) / 2
                  : px0 + (position + static_cast<double>(e)) / span * (px1 - px0);
  };
  auto Y = [&](double v) { return py1 - v / y_hi * (py1 - py0); };

  out << "<g id=\"attention\" class=\"panel\">\n";
  panel_title(out, px0, px1, top, "Attention",
              non_finite > 0 ? count_text(non_finite, "non-finite value") + " counted as 0" : "");
  std::string note = "mean over the windows and forecast steps";
  if (total > 0) {
    char share[160];
    std::snprintf(share, sizeof share,
                  "; the encoder positions hold %.1f%% of it (the rest is on decoder steps),"
                  " drawn as shares summing to 1",
                  100.0 * encoder_total / total);
    note += share;
  }
  out << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(top + 34)
      << "\" text-anchor=\"middle\" fill=\"" << kNoteColour << "\">" << xml_escape(note)
      << "</text>\n";
  out << "<rect x=\"" << num(px0) << "\" y=\"" << num(py0) << "\" width=\"" << num(px1 - px0)
      << "\" height=\"" << num(py1 - py0) << "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (double t : nice_ticks(0.0, y_hi, 4)) {
    out << "<line x1=\"" << num(px0) << "\" y1=\"" << num(Y(t)) << "\" x2=\"" << num(px1)
        << "\" y2=\"" << num(Y(t)) << "\" stroke=\"#e6e6e6\"/>\n";
    out << "<text x=\"" << num(px0 - 6) << "\" y=\"" << num(Y(t) + 4) << "\" text-anchor=\"end\">"
        << tick_label(t) << "</text>\n";
  }
  // Time index ticks: every position when there are few, else round ones.
  std::vector<double> x_ticks;
  if (e > 0 && e <= 10) {
    for (std::int64_t p = -e; p <= -1; ++p) x_ticks.push_back(static_cast<double>(p));
  } else if (e > 0) {
    x_ticks = nice_ticks(static_cast<double>(-e), -1.0, 8);
  }
  for (double t : x_ticks) {
    out << "<line x1=\"" << num(X(t)) << "\" y1=\"" << num(py1) << "\" x2=\"" << num(X(t))
        << "\" y2=\"" << num(py1 + 4) << "\" stroke=\"#999\"/>\n";
    out << "<text x=\"" << num(X(t)) << "\" y=\"" << num(py1 + 16) << "\" text-anchor=\"middle\">"
        << tick_label(t) << "</text>\n";
  }
  out << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(py1 + 32)
      << "\" text-anchor=\"middle\">Time index</text>\n";
  const double label_y = (py0 + py1) / 2;
  out << "<text x=\"22\" y=\"" << num(label_y)
      << "\" text-anchor=\"middle\" transform=\"rotate(-90 22 " << num(label_y)
      << ")\">Attention</text>\n";
  if (e > 0) {
    std::ostringstream points;
    for (std::int64_t k = 0; k < e; ++k) {
      if (k > 0) points << ' ';
      points << num(X(static_cast<double>(k - e))) << ','
             << num(Y(values[static_cast<std::size_t>(k)]));
    }
    out << "<polyline class=\"attention\" points=\"" << points.str() << "\" fill=\"none\" stroke=\""
        << kLineColour << "\" stroke-width=\"1.6\"/>\n";
    if (e <= kMaxDots) {
      for (std::int64_t k = 0; k < e; ++k) {
        out << "<circle cx=\"" << num(X(static_cast<double>(k - e))) << "\" cy=\""
            << num(Y(values[static_cast<std::size_t>(k)])) << "\" r=\"2.5\" fill=\"" << kLineColour
            << "\"/>\n";
      }
    }
  }
  out << "</g>\n";
  return kAttentionHeight;
}

}  // namespace

std::string interpretation_svg(const Interpretation& interpretation,
                               const InterpretationPlotOptions& options) {
  const double width = options.width;
  struct Group {
    const char* id;
    const char* title;
    const char* empty_note;
    const std::vector<VariableImportance>& list;
  };
  const Group groups[] = {
      {"static_importance", "Static variables importance", "no static variables",
       interpretation.static_importance},
      {"encoder_importance", "Encoder variables importance", "no encoder variables",
       interpretation.encoder_importance},
      {"decoder_importance", "Decoder variables importance", "no decoder variables",
       interpretation.decoder_importance},
  };
  // One name column for all three panels, as wide as their longest shown name.
  std::size_t longest = 4;
  for (const Group& group : groups) {
    for (const VariableImportance& v : group.list) {
      longest = std::max(longest, std::min(svg::char_count(v.variable), options.max_name_chars));
    }
  }
  const double bar_left =
      std::max(kPlotLeft, std::min(24 + kCharWidth * static_cast<double>(longest), width * 0.45));

  std::ostringstream body;
  double y = 30;
  y += attention_panel(body, interpretation, width, y);
  for (const Group& group : groups) {
    y += kGap + importance_panel(body, group.id, group.title, group.empty_note, group.list, width,
                                 bar_left, options.max_name_chars, y + kGap);
  }

  std::ostringstream svg;
  svg::open_svg(svg, options.width, y + 6);
  const std::string over =
      interpretation.windows > 0
          ? "over " +
                count_text(static_cast<std::size_t>(interpretation.windows), "validation window")
          : "no validation windows";
  svg << "<text x=\"" << num(kPlotLeft) << "\" y=\"18\" font-size=\"14\" font-weight=\"bold\">"
      << xml_escape(options.title + " (" + over + ")") << "</text>\n";
  svg << body.str() << "</svg>\n";
  return svg.str();
}

void write_interpretation_svg(const std::filesystem::path& path,
                              const Interpretation& interpretation,
                              const InterpretationPlotOptions& options) {
  write_file_atomically(path, interpretation_svg(interpretation, options));
}

void write_interpretation_files(const std::filesystem::path& directory,
                                const Interpretation& interpretation) {
  write_file_atomically(directory / "interpretation.json", interpretation.to_json().dump(2) + "\n");
  write_interpretation_svg(directory / "interpretation.svg", interpretation);
}

}  // namespace tft
