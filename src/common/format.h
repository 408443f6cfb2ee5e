// Text forms of numbers shared by messages and serialisers.
#pragma once

#include <string>

namespace tft {

// The shortest decimal text that reads back as exactly `value` ("0.3", not
// "0.29999999999999999"), so messages and files show the number the user wrote.
// NaN and infinities come out as "nan", "inf", "-inf".
std::string shortest_double(double value);

// A string as error messages show it: double-quoted, escaped (\", \\, \n, \t), cut after 60
// characters with "...".
std::string show_string(const std::string& text);

}  // namespace tft
