#include "common/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tft {

std::string shortest_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string show_string(const std::string& text) {
  constexpr std::size_t kMaxShown = 60;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const char ch = text[i];
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else {
      out += ch;
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out + "\"";
}

}  // namespace tft
