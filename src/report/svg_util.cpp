#include "report/svg_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tft::svg {

namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one
// (overlong forms, surrogates and code points above U+10FFFF are not valid).
std::size_t utf8_sequence(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    // U+FFFE and U+FFFF are valid UTF-8 but not XML characters.
    const bool non_character = n == 3 && text.compare(i, 2, "\xEF\xBF") == 0 &&
                               static_cast<unsigned char>(text[i + 2]) >= 0xBE;
    if (n == 0 || non_character) {
      out += kReplacement;
      i += std::max<std::size_t>(n, 1);
      continue;
    }
    if (n > 1) {
      out.append(text, i, n);
      i += n;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\t':
      case '\n':
      case '\r': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += kReplacement;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::size_t char_count(const std::string& text) {
  // Code points start at every byte that is not a continuation byte (10xxxxxx).
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string shorten(const std::string& text, std::size_t max_chars) {
  if (char_count(text) <= max_chars) return text;
  if (max_chars == 0) return "";
  std::size_t end = 0;  // the byte where character max_chars - 1 (0-based) starts
  for (std::size_t chars = 0; end < text.size(); ++end) {
    if ((static_cast<unsigned char>(text[end]) & 0xC0) != 0x80 && chars++ == max_chars - 1) break;
  }
  return text.substr(0, end) + "\xE2\x80\xA6";  // U+2026
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  std::vector<double> ticks;
  const double range = hi - lo;
  if (!(range > 0) || !std::isfinite(range)) return {lo};
  const double raw = range / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::string tick_label(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

void open_svg(std::ostream& svg, int width, double height) {
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
      << num(height) << "\" viewBox=\"0 0 " << width << " " << num(height)
      << "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

}  // namespace tft::svg
