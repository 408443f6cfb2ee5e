// Text forms of numbers and lists shared by messages and serialisers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tft {

// The shortest decimal text that reads back as exactly `value` ("0.3", not
// "0.29999999999999999"), so messages and files show the number the user wrote.
// NaN and infinities come out as "nan", "inf", "-inf".
std::string shortest_double(double value);

// `value` with `decimals` digits after the point ("0.1237"), for figures in messages.
std::string fixed_text(double value, int decimals);

// `text` double-quoted with \", \\, \n, \t, \r and \xNN for other control characters escaped:
// a valid YAML (and C) double-quoted scalar.
std::string double_quoted(const std::string& text);

// A string as error messages show it: double_quoted, cut after 60 characters with "...".
std::string show_string(const std::string& text);

// The items separated by `separator`: join({"a", "b"}) is "a, b" (lists in messages).
std::string join(const std::vector<std::string>& items, const char* separator = ", ");

// A byte count as people read it: "12.3 MiB", "850 KiB", "512 B".
std::string format_bytes(std::int64_t bytes);

}  // namespace tft
