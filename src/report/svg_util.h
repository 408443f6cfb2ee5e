// Small helpers for the hand-written SVG plots the trainer writes (forecast.svg,
// interpretation.svg): escaping text for XML, coordinates, round tick values and their labels.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace tft::svg {

// A plot's margins left and right of its axes, the same in every file so panels line up: the
// left one holds the y axis' tick labels.
constexpr double kPlotLeft = 78, kPlotRight = 24;

// `text` safe inside an XML element or a double-quoted attribute: & < > " escaped, and every
// byte XML 1.0 cannot hold (control characters other than tab, newline and carriage return,
// bytes that are not valid UTF-8) replaced by U+FFFD, so any name gives a well-formed file.
std::string xml_escape(const std::string& text);

// The number of characters (UTF-8 code points) in `text`.
std::size_t char_count(const std::string& text);

// At most `max_chars` characters (UTF-8 code points) of `text`: a longer text is cut to
// max_chars - 1 of them followed by an ellipsis (U+2026). Not escaped.
std::string shorten(const std::string& text, std::size_t max_chars);

// A coordinate with one decimal ("12.5").
std::string num(double v);

// Tick values: about `count` round numbers (1, 2, 5 x 10^k apart) within [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int count);

// A tick value as people read it: "0.25", "1500", "1.5e+06".
std::string tick_label(double v);

// The opening <svg> element (font, size, viewBox) and a white background.
void open_svg(std::ostream& svg, int width, double height);

}  // namespace tft::svg
