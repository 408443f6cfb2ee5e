// A strict, fast CSV tokenizer (RFC 4180), hand-written: Debian packages no C++ CSV library
// that is both strict (line numbers, unterminated quotes, wrong field counts) and fast, and
// the format is small. The whole file is read into memory once; records are handed out as
// string_views into that buffer (quoted fields are unescaped in place), so tokenizing
// allocates nothing per record.
//
// Rules: the first record is the header; fields are separated by one delimiter character;
// a field may be enclosed in double quotes, inside which the delimiter and line breaks are
// data and "" is one quote; LF or CRLF ends a record; a UTF-8 byte order mark at the start is
// skipped; empty lines are skipped. Errors (tft::DataError) name the file and the 1-based line
// where the record starts: every record must have as many fields as the header, a quoted field
// must be closed and followed by a delimiter or the end of the line, and a quote may not
// appear inside an unquoted field.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tft {

class CsvReader {
 public:
  // Reads `path` (IoError when it cannot be read). `name` in messages is the path as given.
  static CsvReader open(const std::string& path, char delimiter = ',');

  // Tokenizes `text` (for tests and in-memory data); `name` is used in messages.
  CsvReader(std::string name, std::string text, char delimiter = ',');

  CsvReader(CsvReader&&) noexcept = default;
  CsvReader& operator=(CsvReader&&) noexcept = default;
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  // Size of the file's text in bytes.
  std::size_t size() const { return text_.size(); }
  // Line feeds in the text: an upper bound of the number of records, for reserving storage.
  std::size_t count_lines() const;

  // The next record: `fields` gets one view per header column (valid until the next call),
  // `line` the 1-based line where the record starts. Returns false at the end of the text.
  bool next(std::vector<std::string_view>& fields, std::size_t& line);

 private:
  // Splits one record starting at pos_; fills `fields` (any count). False at the end.
  bool split(std::vector<std::string_view>& fields, std::size_t& line);
  [[noreturn]] void fail(std::size_t line, const std::string& what) const;

  std::string name_;
  std::string text_;
  char delimiter_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;  // line of text_[pos_]
  std::vector<std::string> header_;
  std::array<unsigned char, 256> stop_{};  // bytes that end the fast scan of a field
};

}  // namespace tft
