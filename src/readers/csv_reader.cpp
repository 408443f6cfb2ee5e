#include "readers/csv_reader.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "common/error.h"

namespace tft {

namespace {

std::string read_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw IoError("cannot read data file '" + path + "': " + std::strerror(errno));
  std::string text;
  // Read straight into a buffer of the file's size (one copy, no regrowth); a file that
  // grows meanwhile, or has no size (a pipe), is read on in chunks.
  long size = 0;
  if (std::fseek(file.get(), 0, SEEK_END) == 0) size = std::ftell(file.get());
  std::rewind(file.get());
  std::size_t used = 0;
  text.resize(size > 0 ? static_cast<std::size_t>(size) : std::size_t{1} << 16);
  while (true) {
    used += std::fread(text.data() + used, 1, text.size() - used, file.get());
    if (used < text.size()) break;  // end of file (or an error, checked below)
    const int next = std::fgetc(file.get());
    if (next == EOF) break;  // exactly the expected size
    text.resize(text.size() * 2);
    text[used++] = static_cast<char>(next);
  }
  if (std::ferror(file.get())) {
    throw IoError("cannot read data file '" + path + "': " + std::strerror(errno));
  }
  text.resize(used);
  return text;
}

}  // namespace

CsvReader CsvReader::open(const std::string& path, char delimiter) {
  return CsvReader(path, read_file(path), delimiter);
}

CsvReader::CsvReader(std::string name, std::string text, char delimiter)
    : name_(std::move(name)), text_(std::move(text)), delimiter_(delimiter) {
  // Bytes that end an unquoted field's fast scan: the delimiter, a line feed, a quote, and
  // NUL (std::string keeps one after the text, so the scan needs no bounds check).
  stop_.fill(0);
  stop_[static_cast<unsigned char>(delimiter_)] = 1;
  stop_['\n'] = 1;
  stop_['"'] = 1;
  stop_[0] = 1;
  if (text_.size() >= 3 && text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
  std::vector<std::string_view> fields;
  std::size_t line = 0;
  if (!split(fields, line)) fail(1, "the file is empty (expected a header line)");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    header_.emplace_back(fields[i]);
    if (header_.back().empty()) {
      fail(line, "header column " + std::to_string(i + 1) + " has an empty name");
    }
  }
}

void CsvReader::fail(std::size_t line, const std::string& what) const {
  throw DataError(name_ + ":" + std::to_string(line) + ": " + what);
}

std::size_t CsvReader::count_lines() const {
  std::size_t lines = 1;
  const char* p = text_.data();
  const char* const end = p + text_.size();
  while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))) !=
         nullptr) {
    ++lines;
    ++p;
  }
  return lines;
}

bool CsvReader::next(std::vector<std::string_view>& fields, std::size_t& line) {
  if (!split(fields, line)) return false;
  if (fields.size() != header_.size()) {
    fail(line, "expected " + std::to_string(header_.size()) + " fields, got " +
                   std::to_string(fields.size()));
  }
  return true;
}

bool CsvReader::split(std::vector<std::string_view>& fields, std::size_t& line) {
  fields.clear();
  char* const data = text_.data();
  const std::size_t end = text_.size();
  // Skip empty lines.
  while (pos_ < end && (data[pos_] == '\n' || data[pos_] == '\r')) {
    if (data[pos_] == '\n') ++line_;
    ++pos_;
  }
  if (pos_ >= end) return false;
  line = line_;
  const char delim = delimiter_;
  std::size_t p = pos_;
  // data[end] is the string's terminating NUL: the fast scan below stops there.
  while (true) {
    if (p < end && data[p] == '"') {
      // Quoted field: unescape in place ("" -> ") into [begin, out).
      const std::size_t begin = p + 1;
      std::size_t out = begin;
      std::size_t q = begin;
      while (true) {
        if (q >= end) {
          fail(line, "column '" +
                         (fields.size() < header_.size() ? header_[fields.size()]
                                                         : std::to_string(fields.size() + 1)) +
                         "': unterminated quoted field");
        }
        const char ch = data[q];
        if (ch == '"') {
          if (q + 1 < end && data[q + 1] == '"') {
            data[out++] = '"';
            q += 2;
            continue;
          }
          ++q;
          break;
        }
        if (ch == '\n') ++line_;
        data[out++] = ch;
        ++q;
      }
      fields.emplace_back(data + begin, out - begin);
      p = q;
      if (p < end && data[p] == '\r' && (p + 1 >= end || data[p + 1] == '\n')) ++p;
      if (p >= end || data[p] == '\n') break;
      if (data[p] != delim) {
        fail(line, "column '" +
                       (fields.size() <= header_.size() && !header_.empty()
                            ? header_[fields.size() - 1]
                            : std::to_string(fields.size())) +
                       "': text after the closing quote of a quoted field");
      }
      ++p;
      continue;
    }
    // Unquoted field: up to the delimiter or the end of the line.
    const std::size_t begin = p;
    while (true) {
      while (!stop_[static_cast<unsigned char>(data[p])]) ++p;
      if (p >= end || data[p] == delim || data[p] == '\n') break;
      if (data[p] == '"') {
        fail(line, "column '" +
                       (fields.size() < header_.size() ? header_[fields.size()]
                                                       : std::to_string(fields.size() + 1)) +
                       "': stray '\"' in an unquoted field (quote the whole field)");
      }
      ++p;  // a NUL byte inside the text is data
    }
    std::size_t stop = p;
    if ((p >= end || data[p] == '\n') && stop > begin && data[stop - 1] == '\r') --stop;
    fields.emplace_back(data + begin, stop - begin);
    if (p >= end || data[p] == '\n') break;
    ++p;  // delimiter
  }
  if (p < end) {
    ++p;  // '\n'
    ++line_;
  }
  pos_ = p;
  return true;
}

}  // namespace tft
