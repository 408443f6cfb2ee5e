// YAML plain scalars, read and written by the one rule set both config readers share (the
// checkpoint section's and the training config's): the YAML 1.2 core schema, the one every
// current YAML library agrees on, so `yes` stays a string, `-1` is a negative integer and
// `1e3` a float. Quoted scalars never come here: they are strings whatever they hold.
#pragma once

#include <cstdint>
#include <string>

namespace tft {

// The kinds a value of a config reader can have; a plain scalar resolves to one of the first
// seven. Seq and Map are the readers' own, Other is for what a format has beyond these (a
// JSON binary value).
enum class YamlKind { Null, Bool, UInt, NegInt, BigInt, Float, String, Seq, Map, Other };

struct YamlScalar {
  using Kind = YamlKind;
  Kind kind = Kind::Null;
  bool boolean = false;
  std::uint64_t uint = 0;  // UInt
  std::int64_t sint = 0;   // NegInt: from -1 down to INT64_MIN
  double number = 0.0;     // every numeric kind (BigInt too, rounded)
  std::string text;        // String
  std::string shown;       // as messages show it: null, true, -1, "two"
};

// Types a plain scalar. Integers: UInt up to UINT64_MAX, NegInt from -1 down to INT64_MIN
// ("-0" is UInt 0), BigInt beyond either end (its sign in `shown`).
YamlScalar resolve_plain_scalar(const std::string& text);

// True for a BigInt below INT64_MIN (a negative integer too large for any integer key).
bool is_negative_big_int(const YamlScalar& scalar);

// Shortest text that reads back as the same double, always typed as a YAML float: 1.0,
// 1e-06, .inf, -.inf, .nan.
std::string yaml_double(double value);

}  // namespace tft
