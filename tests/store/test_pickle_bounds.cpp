// The pickles of an archive are checked before LibTorch's unpickler trusts their lengths and memo
// indices (store/pickle_bounds.h): what LibTorch writes passes, and a length or memo index
// beyond the pickle is an IoError naming the opcode, before anything is allocated for it.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "common/error.h"
#include "store/pickle_bounds.h"
#include "store/sealed_archive.h"

#include "support/cmocka_cpp.h"

namespace {

using namespace std::string_literals;

// PROTO 2, then `body`, then STOP.
std::string pickle_of(const std::string& body) { return "\x80\x02"s + body + "."; }

std::string little_endian(std::uint64_t value, int width) {
  std::string bytes;
  for (int i = 0; i < width; ++i) bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return bytes;
}

void check(const std::string& pickle) { tft::check_pickle_bounds(pickle, "test.pkl"); }

}  // namespace

TFT_TEST(test_what_libtorch_pickles_passes) {
  // Strings, integers of every width, floats, lists, dicts, tuples, memo puts and gets.
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("name", std::string(300, 'n'));
  dict.insert("small", int64_t{7});
  dict.insert("wide", int64_t{1} << 40);
  dict.insert("ratio", 0.25);
  dict.insert("flags", c10::List<bool>({true, false}));
  std::vector<c10::IValue> many;
  for (int i = 0; i < 400; ++i) many.emplace_back("item " + std::to_string(i));  // LONG_BINPUT
  dict.insert("many", c10::ivalue::Tuple::create(std::move(many)));
  const std::vector<char> pickled = torch::jit::pickle(c10::IValue(dict));
  check(std::string(pickled.begin(), pickled.end()));

  // Hand-written, with an argument of every kind.
  check(pickle_of("]q\x00h\x00"s));                       // a memo put and get
  check(pickle_of("X" + little_endian(3, 4) + "abc"));    // BINUNICODE
  check(pickle_of("cmodule\nname\n"s));                   // GLOBAL's two lines
  check(pickle_of("J\x01\x02\x03\x04G12345678"s));        // BININT, BINFLOAT
  check(pickle_of("\x8a\x08" + little_endian(5, 8)));     // LONG1
  check(pickle_of("]p0\n"s));                             // PUT
  check(pickle_of("\x95" + little_endian(2, 8) + "]0"));  // FRAME
}

TFT_TEST(test_lengths_past_the_end_are_refused) {
  // The lengths fuzz_snapshot found LibTorch reserving: 4 GiB and 3e17 bytes.
  TFT_ASSERT_THROWS_WITH(check(pickle_of("X" + little_endian(0xfffffff0, 4) + "abc")), tft::IoError,
                         "BINUNICODE with 4294967280 bytes of argument where 4");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("\x8d" + little_endian(0x44b0c6800000216, 8) + "abc")),
                         tft::IoError, "BINUNICODE8 with 309");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("\x8e" + little_endian(1000, 8))), tft::IoError,
                         "BINBYTES8");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("T" + little_endian(0xffffffff, 4))), tft::IoError,
                         "BINSTRING with a negative length");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("\x95" + little_endian(100, 8) + "]")), tft::IoError,
                         "FRAME longer than the rest");
  // The message says where: the opcode's offset and the pickle's size.
  TFT_ASSERT_THROWS_WITH(check(pickle_of("]X" + little_endian(50, 4))), tft::IoError,
                         "test.pkl: refused before unpickling: BINUNICODE with 50 bytes of "
                         "argument where 1 are left at byte 3 of its 9-byte pickle");
}

TFT_TEST(test_memo_indices_beyond_the_pickle_are_refused) {
  // LibTorch grows its memo table to the index: 0x0ffffff0 entries are 4 GiB.
  TFT_ASSERT_THROWS_WITH(check(pickle_of("]r" + little_endian(0x0ffffff0, 4))), tft::IoError,
                         "LONG_BINPUT with memo index 268435440");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("]q\xfe"s)), tft::IoError, "BINPUT with memo index 254");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("]p99999999999999999999\n")), tft::IoError,
                         "PUT with a memo index that is no number");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("]p12345\n")), tft::IoError, "memo index 12345");
}

TFT_TEST(test_malformed_pickles_are_refused) {
  TFT_ASSERT_THROWS_WITH(check("\x80\x02]"s), tft::IoError, "no STOP");
  TFT_ASSERT_THROWS_WITH(check(""), tft::IoError, "no STOP");
  TFT_ASSERT_THROWS_WITH(check(pickle_of("\xff"s)), tft::IoError, "byte 255, which is no pickle");
  TFT_ASSERT_THROWS_WITH(check("\x80\x02J\x01"s), tft::IoError,
                         "BININT with 4 bytes of argument where 1");
  TFT_ASSERT_THROWS_WITH(check("\x80\x02"
                               "cmodule"s),
                         tft::IoError, "GLOBAL, whose text has no end");
  // What follows STOP is never read, by LibTorch or here.
  check(pickle_of("N") + "\xff\xff");
}

TFT_TEST(test_an_archive_with_a_crafted_length_is_refused_before_libtorch_reads_it) {
  torch::serialize::OutputArchive out;
  out.write("state", c10::IValue("marker-text"s));
  out.write("weights", at::arange(6, at::kFloat));
  const std::string bytes = tft::archive_to_bytes(out, "the test archive");

  torch::serialize::InputArchive in;
  tft::load_archive_from_bytes(in, bytes, "'honest.pt'");
  c10::IValue state;
  in.read("state", state);
  assert_string_equal(state.toStringRef().c_str(), "marker-text");

  // The string's BINUNICODE length, raised in place: the zip's sizes stay right, and LibTorch
  // checks no CRC, so only the pickle is wrong.
  std::string crafted = bytes;
  const std::string honest = "X" + little_endian(11, 4) + "marker-text";
  const std::size_t at = crafted.find(honest);
  assert_true(at != std::string::npos);
  crafted.replace(at + 1, 4, little_endian(0xfffffff0, 4));
  torch::serialize::InputArchive refused;
  TFT_ASSERT_THROWS_WITH(tft::load_archive_from_bytes(refused, crafted, "'crafted.pt'"),
                         tft::IoError,
                         "'crafted.pt' (its record 'data.pkl'): refused before unpickling: "
                         "BINUNICODE with 4294967280 bytes");
  // Bytes that are no archive stay LibTorch's error.
  TFT_ASSERT_THROWS_WITH(tft::load_archive_from_bytes(refused, "not a zip", "'text.pt'"),
                         tft::IoError, "'text.pt': not a readable LibTorch archive");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_what_libtorch_pickles_passes),
      cmocka_unit_test(test_lengths_past_the_end_are_refused),
      cmocka_unit_test(test_memo_indices_beyond_the_pickle_are_refused),
      cmocka_unit_test(test_malformed_pickles_are_refused),
      cmocka_unit_test(test_an_archive_with_a_crafted_length_is_refused_before_libtorch_reads_it),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
