#include "checkpoint/memory_budget.h"

#include <cctype>
#include <cstddef>
#include <iterator>
#include <limits>

#include "common/format.h"

namespace tft {

namespace {

constexpr std::int64_t kMaxBytes = std::numeric_limits<std::int64_t>::max();

struct BinaryUnit {
  const char* name;
  int shift;  // bytes = value << shift
};
constexpr BinaryUnit kUnits[] = {{"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};

// Units people write that mean powers of ten (or nothing definite), with the binary unit of
// the same letter to suggest instead.
struct AmbiguousUnit {
  const char* written;
  const char* binary;
};
constexpr AmbiguousUnit kAmbiguous[] = {
    {"k", "KiB"},   {"K", "KiB"},   {"kB", "KiB"},  {"KB", "KiB"}, {"kb", "KiB"},
    {"kiB", "KiB"}, {"kib", "KiB"}, {"KIB", "KiB"}, {"M", "MiB"},  {"MB", "MiB"},
    {"mb", "MiB"},  {"mib", "MiB"}, {"MIB", "MiB"}, {"G", "GiB"},  {"GB", "GiB"},
    {"gb", "GiB"},  {"gib", "GiB"}, {"GIB", "GiB"}, {"T", "TiB"},  {"TB", "TiB"},
    {"tb", "TiB"},  {"tib", "TiB"}, {"TIB", "TiB"}, {"b", "B"},    {"bytes", "B"}};

std::string quoted(const std::string& text) { return show_string(text); }

std::string too_large(const std::string& text) {
  return quoted(text) + " is too large (at most 2^63 - 1 bytes, about 8 EiB)";
}

}  // namespace

bool operator==(const MemoryBudget& a, const MemoryBudget& b) {
  return a.automatic == b.automatic && (a.automatic || a.bytes == b.bytes);
}
bool operator!=(const MemoryBudget& a, const MemoryBudget& b) { return !(a == b); }

const char* memory_budget_forms() {
  return "a size such as 3.5GiB or 900MiB (binary units B, KiB, MiB, GiB, TiB), a whole number "
         "of bytes, or auto";
}

std::variant<MemoryBudget, std::string> parse_memory_budget(const std::string& text) {
  if (text == "auto") return MemoryBudget::automatic_budget();
  const std::string expected =
      std::string("expected ") + memory_budget_forms() + ", got " + quoted(text);
  std::size_t i = 0;
  if (!text.empty() && text[0] == '-') {
    return "must be more than 0 bytes (got " + quoted(text) + ")";
  }
  // The whole part, exactly (it may exceed what a double holds to the byte).
  std::uint64_t whole = 0;
  const std::size_t whole_begin = i;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (whole > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return too_large(text);
    whole = whole * 10 + digit;
  }
  if (i == whole_begin) return expected;
  // The fraction as numerator / 10^digits; digits past the 18th cannot change whole bytes
  // of anything below 2^63 by more than the rounding down already does.
  std::uint64_t numerator = 0, denominator = 1;
  bool has_fraction = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const std::size_t fraction_begin = i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (denominator <= std::numeric_limits<std::uint64_t>::max() / 10 / 10) {
        numerator = numerator * 10 + static_cast<std::uint64_t>(text[i] - '0');
        denominator *= 10;
      }
    }
    if (i == fraction_begin) return expected;
    has_fraction = true;
  }
  if (i < text.size() && text[i] == ' ') ++i;
  const std::string unit_text = text.substr(i);
  const BinaryUnit* unit = &kUnits[0];  // no unit: bytes
  if (!unit_text.empty()) {
    unit = nullptr;
    for (const BinaryUnit& u : kUnits) {
      if (unit_text == u.name) unit = &u;
    }
  }
  if (unit == nullptr) {
    const std::string forms = std::string("expected ") + memory_budget_forms();
    for (const AmbiguousUnit& a : kAmbiguous) {
      if (unit_text == a.written) {
        return "unknown unit '" + unit_text + "' in " + quoted(text) +
               ": sizes take binary units (1 KiB = 1024 bytes); did you mean " +
               text.substr(0, text.size() - unit_text.size()) + a.binary + "? (" + forms + ")";
      }
    }
    return "unknown unit '" + unit_text + "' in " + quoted(text) + " (" + forms + ")";
  }
  if (has_fraction && unit->shift == 0) {
    return "a fraction of a byte in " + quoted(text) + " (bytes are whole)";
  }
  if (whole > static_cast<std::uint64_t>(kMaxBytes) >> unit->shift) return too_large(text);
  const auto fraction_bytes = static_cast<std::uint64_t>(
      (static_cast<unsigned __int128>(numerator) << unit->shift) / denominator);  // rounded down
  const std::uint64_t bytes = (whole << unit->shift) + fraction_bytes;
  if (bytes > static_cast<std::uint64_t>(kMaxBytes)) return too_large(text);
  if (bytes == 0) {
    return "must be more than 0 bytes (got " + quoted(text) +
           (whole == 0 && numerator > 0 ? ", which rounds down to 0 bytes)" : ")");
  }
  return MemoryBudget::of_bytes(static_cast<std::int64_t>(bytes));
}

std::string memory_budget_text(const MemoryBudget& budget) {
  if (budget.automatic) return "auto";
  for (int k = static_cast<int>(std::size(kUnits)) - 1; k > 0; --k) {
    const std::int64_t size = std::int64_t{1} << kUnits[k].shift;
    if (budget.bytes > 0 && budget.bytes % size == 0) {
      return std::to_string(budget.bytes / size) + kUnits[k].name;
    }
  }
  return std::to_string(budget.bytes);
}

std::string memory_budget_shown(const MemoryBudget& budget) {
  return budget.automatic ? std::string("auto") : format_bytes(budget.bytes);
}

}  // namespace tft
