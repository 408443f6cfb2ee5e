// The CSV tokenizer: quoting, line endings, line numbers, and every structural error.
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "readers/csv_reader.h"

#include "support/cmocka_cpp.h"

namespace {

struct Record {
  std::vector<std::string> fields;
  std::size_t line;
};

std::vector<Record> read_all(const std::string& text, char delimiter = ',') {
  tft::CsvReader reader("t.csv", text, delimiter);
  std::vector<Record> out;
  std::vector<std::string_view> fields;
  std::size_t line = 0;
  while (reader.next(fields, line)) {
    Record r{{}, line};
    for (std::string_view f : fields) r.fields.emplace_back(f);
    out.push_back(r);
  }
  return out;
}

}  // namespace

TFT_TEST(test_plain_and_quoted_fields) {
  tft::CsvReader reader("t.csv", "a,b,c\n1,,x y\n\"q,1\",\"say \"\"hi\"\"\",\"\"\n", ',');
  assert_int_equal(reader.header().size(), 3);
  assert_string_equal(reader.header()[2].c_str(), "c");
  const auto records = read_all("a,b,c\n1,,x y\n\"q,1\",\"say \"\"hi\"\"\",\"\"\n");
  assert_int_equal(records.size(), 2);
  assert_string_equal(records[0].fields[0].c_str(), "1");
  assert_string_equal(records[0].fields[1].c_str(), "");
  assert_string_equal(records[0].fields[2].c_str(), "x y");
  assert_string_equal(records[1].fields[0].c_str(), "q,1");
  assert_string_equal(records[1].fields[1].c_str(), "say \"hi\"");
  assert_string_equal(records[1].fields[2].c_str(), "");
  assert_int_equal(records[1].line, 3);
}

TFT_TEST(test_line_endings_bom_empty_lines_and_line_numbers) {
  const auto records =
      read_all("\xEF\xBB\xBFx;y\r\n1;2\r\n\r\n\n3;\"multi\nline\"\n4;5", ';');  // no final newline
  assert_int_equal(records.size(), 3);
  assert_string_equal(records[0].fields[1].c_str(), "2");
  assert_int_equal(records[0].line, 2);
  assert_int_equal(records[1].line, 5);
  assert_string_equal(records[1].fields[1].c_str(), "multi\nline");
  assert_int_equal(records[2].line, 7);  // the quoted line break counted
  assert_string_equal(records[2].fields[1].c_str(), "5");
}

TFT_TEST(test_errors) {
  TFT_ASSERT_THROWS_WITH(read_all("a,b\n1,2\n3\n"), tft::DataError,
                         "t.csv:3: expected 2 fields, got 1");
  TFT_ASSERT_THROWS_WITH(read_all("a,b\n1,2,3\n"), tft::DataError,
                         "t.csv:2: expected 2 fields, got 3");
  TFT_ASSERT_THROWS_WITH(read_all("a,b\n1,\"open\n2,3\n"), tft::DataError,
                         "t.csv:2: column 'b': unterminated quoted field");
  TFT_ASSERT_THROWS_WITH(read_all("a,b\n1,ab\"c\n"), tft::DataError,
                         "t.csv:2: column 'b': stray '\"' in an unquoted field");
  TFT_ASSERT_THROWS_WITH(read_all("a,b\n\"x\"y,2\n"), tft::DataError,
                         "t.csv:2: column 'a': text after the closing quote");
  TFT_ASSERT_THROWS_WITH(read_all(""), tft::DataError, "t.csv:1: the file is empty");
  TFT_ASSERT_THROWS_WITH(read_all("a,,c\n"), tft::DataError,
                         "t.csv:1: header column 2 has an empty name");
  TFT_ASSERT_THROWS_WITH(tft::CsvReader::open("/nonexistent/x.csv"), tft::IoError,
                         "cannot read data file '/nonexistent/x.csv'");
}

TFT_TEST(test_other_delimiters) {
  tft::CsvReader reader("t.tsv", "a\tb\n1\t\"2\t3\"\n", '\t');
  std::vector<std::string_view> fields;
  std::size_t line = 0;
  assert_true(reader.next(fields, line));
  assert_true(fields[1] == "2\t3");
  assert_false(reader.next(fields, line));
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_and_quoted_fields),
      cmocka_unit_test(test_line_endings_bom_empty_lines_and_line_numbers),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_other_delimiters),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
