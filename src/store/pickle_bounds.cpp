#include "store/pickle_bounds.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>

#include "common/error.h"

namespace tft {

namespace {

// What follows an opcode, as Python's pickletools documents it for protocols 0 to 5.
enum class Argument : std::uint8_t {
  kNone,
  kFixed,      // `width` bytes
  kLine,       // text up to a newline
  kTwoLines,   // GLOBAL and INST: module and name
  kCounted,    // a `width`-byte little-endian length, then that many bytes
  kFrame,      // an 8-byte length of the frame that follows (read as opcodes)
  kMemoIndex,  // a `width`-byte little-endian memo index
  kMemoLine,   // PUT: a decimal memo index up to a newline
};

struct Opcode {
  const char* name;
  Argument argument = Argument::kNone;
  std::uint8_t width = 0;
  bool is_signed = false;  // BINSTRING's and LONG4's lengths are signed
};

// Every opcode of pickle protocols 0 to 5: LibTorch's unpickler reads a subset, so no pickle it
// accepts holds a byte unknown here.
std::optional<Opcode> opcode_of(unsigned char code) {
  switch (code) {
    case '(': return Opcode{"MARK"};
    case '.': return Opcode{"STOP"};
    case '0': return Opcode{"POP"};
    case '1': return Opcode{"POP_MARK"};
    case '2': return Opcode{"DUP"};
    case 'N': return Opcode{"NONE"};
    case 'R': return Opcode{"REDUCE"};
    case 'a': return Opcode{"APPEND"};
    case 'b': return Opcode{"BUILD"};
    case 'd': return Opcode{"DICT"};
    case '}': return Opcode{"EMPTY_DICT"};
    case 'e': return Opcode{"APPENDS"};
    case 'l': return Opcode{"LIST"};
    case ']': return Opcode{"EMPTY_LIST"};
    case 'o': return Opcode{"OBJ"};
    case 's': return Opcode{"SETITEM"};
    case 't': return Opcode{"TUPLE"};
    case ')': return Opcode{"EMPTY_TUPLE"};
    case 'u': return Opcode{"SETITEMS"};
    case 'Q': return Opcode{"BINPERSID"};
    case 0x81: return Opcode{"NEWOBJ"};
    case 0x85: return Opcode{"TUPLE1"};
    case 0x86: return Opcode{"TUPLE2"};
    case 0x87: return Opcode{"TUPLE3"};
    case 0x88: return Opcode{"NEWTRUE"};
    case 0x89: return Opcode{"NEWFALSE"};
    case 0x8f: return Opcode{"EMPTY_SET"};
    case 0x90: return Opcode{"ADDITEMS"};
    case 0x91: return Opcode{"FROZENSET"};
    case 0x92: return Opcode{"NEWOBJ_EX"};
    case 0x93: return Opcode{"STACK_GLOBAL"};
    case 0x94: return Opcode{"MEMOIZE"};
    case 0x97: return Opcode{"NEXT_BUFFER"};
    case 0x98: return Opcode{"READONLY_BUFFER"};

    case 'J': return Opcode{"BININT", Argument::kFixed, 4};
    case 'K': return Opcode{"BININT1", Argument::kFixed, 1};
    case 'M': return Opcode{"BININT2", Argument::kFixed, 2};
    case 'G': return Opcode{"BINFLOAT", Argument::kFixed, 8};
    case 'h': return Opcode{"BINGET", Argument::kFixed, 1};
    case 'j': return Opcode{"LONG_BINGET", Argument::kFixed, 4};
    case 0x80: return Opcode{"PROTO", Argument::kFixed, 1};
    case 0x82: return Opcode{"EXT1", Argument::kFixed, 1};
    case 0x83: return Opcode{"EXT2", Argument::kFixed, 2};
    case 0x84: return Opcode{"EXT4", Argument::kFixed, 4};

    case 'I': return Opcode{"INT", Argument::kLine};
    case 'L': return Opcode{"LONG", Argument::kLine};
    case 'F': return Opcode{"FLOAT", Argument::kLine};
    case 'S': return Opcode{"STRING", Argument::kLine};
    case 'V': return Opcode{"UNICODE", Argument::kLine};
    case 'P': return Opcode{"PERSID", Argument::kLine};
    case 'g': return Opcode{"GET", Argument::kLine};
    case 'c': return Opcode{"GLOBAL", Argument::kTwoLines};
    case 'i': return Opcode{"INST", Argument::kTwoLines};

    case 'U': return Opcode{"SHORT_BINSTRING", Argument::kCounted, 1};
    case 'T': return Opcode{"BINSTRING", Argument::kCounted, 4, true};
    case 'C': return Opcode{"SHORT_BINBYTES", Argument::kCounted, 1};
    case 'B': return Opcode{"BINBYTES", Argument::kCounted, 4};
    case 0x8c: return Opcode{"SHORT_BINUNICODE", Argument::kCounted, 1};
    case 'X': return Opcode{"BINUNICODE", Argument::kCounted, 4};
    case 0x8d: return Opcode{"BINUNICODE8", Argument::kCounted, 8};
    case 0x8e: return Opcode{"BINBYTES8", Argument::kCounted, 8};
    case 0x96: return Opcode{"BYTEARRAY8", Argument::kCounted, 8};
    case 0x8a: return Opcode{"LONG1", Argument::kCounted, 1};
    case 0x8b: return Opcode{"LONG4", Argument::kCounted, 4, true};
    case 0x95: return Opcode{"FRAME", Argument::kFrame, 8};

    case 'q': return Opcode{"BINPUT", Argument::kMemoIndex, 1};
    case 'r': return Opcode{"LONG_BINPUT", Argument::kMemoIndex, 4};
    case 'p': return Opcode{"PUT", Argument::kMemoLine};
    default: return std::nullopt;
  }
}

// One pass over a pickle; `refuse` names the opcode being read and where it started.
class PickleWalk {
 public:
  PickleWalk(std::string_view pickle, const std::string& where) : pickle_(pickle), where_(where) {}

  void run() {
    while (at_ < pickle_.size()) {
      opcode_start_ = at_;
      const auto code = static_cast<unsigned char>(pickle_[at_++]);
      const std::optional<Opcode> opcode = opcode_of(code);
      if (!opcode) refuse("byte " + std::to_string(code) + ", which is no pickle opcode,");
      opcode_ = *opcode;
      read_argument();
      // LibTorch stops at the first STOP; whatever follows is never read.
      if (code == '.') return;
    }
    opcode_start_ = pickle_.size();
    refuse("the end, with no STOP before it,");
  }

 private:
  void read_argument() {
    switch (opcode_.argument) {
      case Argument::kNone: return;
      case Argument::kFixed: take(opcode_.width); return;
      case Argument::kLine: skip_line(); return;
      case Argument::kTwoLines:
        skip_line();
        skip_line();
        return;
      case Argument::kCounted: take(length_field()); return;
      case Argument::kFrame:
        // The frame's opcodes are read by this loop; its length must still fit.
        if (length_field() > left()) refuse(std::string(opcode_.name) + " longer than the rest");
        return;
      case Argument::kMemoIndex: check_memo_index(little_endian(opcode_.width)); return;
      case Argument::kMemoLine: check_memo_index(decimal_line()); return;
    }
  }

  std::uint64_t left() const { return pickle_.size() - at_; }

  void take(std::uint64_t bytes) {
    if (bytes > left()) {
      refuse(std::string(opcode_.name) + " with " + std::to_string(bytes) +
             " bytes of argument where " + std::to_string(left()) + " are left");
    }
    at_ += static_cast<std::size_t>(bytes);
  }

  std::uint64_t little_endian(std::size_t width) {
    if (width > left()) refuse(std::string(opcode_.name) + ", cut off,");
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      value |= std::uint64_t{static_cast<unsigned char>(pickle_[at_ + i])} << (8 * i);
    }
    at_ += width;
    return value;
  }

  std::uint64_t length_field() {
    const std::uint64_t length = little_endian(opcode_.width);
    const std::uint64_t sign_bit = std::uint64_t{1} << (8 * opcode_.width - 1);
    if (opcode_.is_signed && (length & sign_bit) != 0) {
      refuse(std::string(opcode_.name) + " with a negative length");
    }
    return length;
  }

  void skip_line() {
    const std::size_t newline = pickle_.find('\n', at_);
    if (newline == std::string_view::npos) {
      refuse(std::string(opcode_.name) + ", whose text has no end of line,");
    }
    at_ = newline + 1;
  }

  std::uint64_t decimal_line() {
    const std::size_t begin = at_;
    skip_line();
    const std::string_view digits = pickle_.substr(begin, at_ - 1 - begin);
    // More digits than a 64-bit integer holds is out of bounds anyway.
    if (digits.empty() || digits.size() > 19 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      refuse(std::string(opcode_.name) + " with a memo index that is no number");
    }
    std::uint64_t value = 0;
    for (const char digit : digits) value = value * 10 + static_cast<std::uint64_t>(digit - '0');
    return value;
  }

  void check_memo_index(std::uint64_t index) {
    if (index >= pickle_.size()) {
      refuse(std::string(opcode_.name) + " with memo index " + std::to_string(index) +
             ", beyond what a pickle of this size holds,");
    }
  }

  [[noreturn]] void refuse(const std::string& what) const {
    throw IoError(where_ + ": refused before unpickling: " + what + " at byte " +
                  std::to_string(opcode_start_) + " of its " + std::to_string(pickle_.size()) +
                  "-byte pickle (the file is damaged or was crafted)");
  }

  std::string_view pickle_;
  const std::string& where_;
  std::size_t at_ = 0;
  std::size_t opcode_start_ = 0;
  Opcode opcode_{"none"};
};

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         std::string_view(text).substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

void check_pickle_bounds(std::string_view pickle, const std::string& where) {
  PickleWalk(pickle, where).run();
}

void check_archive_pickles(std::string_view archive, const std::string& where) {
  caffe2::serialize::PyTorchStreamReader reader(
      std::make_shared<caffe2::serialize::MemoryReadAdapter>(archive.data(),
                                                             static_cast<off_t>(archive.size())));
  for (const std::string& name : reader.getAllRecords()) {
    if (!ends_with(name, "pkl")) continue;
    const auto [data, size] = reader.getRecord(name);
    check_pickle_bounds(std::string_view(static_cast<const char*>(data.get()), size),
                        where + " (its record '" + name + "')");
  }
}

}  // namespace tft
