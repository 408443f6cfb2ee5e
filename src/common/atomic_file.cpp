#include "common/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>
#include <unistd.h>

#include "common/error.h"

namespace tft {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void io_fail(const std::string& what, const fs::path& path, const std::string& why) {
  throw IoError(what + " '" + path.string() + "': " + why);
}

void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

// Writes all of `content` to a new file at `path` and flushes it to the disk (so a rename never
// publishes an empty file after a crash). POSIX calls rather than a stream: a full disk or a
// read-only file system is reported with its errno, at the call that met it.
void write_and_sync(const fs::path& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_fail("cannot write", path, std::strerror(errno));
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) {
      const int error = errno;
      (void)::close(fd);
      io_fail("cannot write", path, std::strerror(error));
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file that cannot sync (a pipe)
    const int error = errno;
    (void)::close(fd);
    io_fail("cannot write", path, std::strerror(error));
  }
  if (::close(fd) != 0) io_fail("cannot write", path, std::strerror(errno));
}

}  // namespace

fs::path temporary_sibling(const fs::path& path) {
  fs::path p = path;
  if (!p.has_filename()) p = p.parent_path();  // "dir/" -> "dir"
  return p.parent_path() / (p.filename().string() + ".tmp-" + std::to_string(::getpid()));
}

void ensure_directory(const fs::path& directory) {
  if (directory.empty()) return;
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) io_fail("cannot create folder", directory, ec.message());
  if (!fs::is_directory(directory, ec)) io_fail("not a folder", directory, "a file is in the way");
}

void write_file_atomically(const fs::path& path, std::string_view content) {
  const fs::path temporary = temporary_sibling(path);
  try {
    write_and_sync(temporary, content);
  } catch (...) {
    remove_quietly(temporary);
    throw;
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) {
    remove_quietly(temporary);
    io_fail("cannot write", path, ec.message());
  }
}

void replace_directory_atomically(const fs::path& path,
                                  const std::function<void(const fs::path&)>& fill) {
  const fs::path temporary = temporary_sibling(path);
  remove_quietly(temporary);  // a leftover of an earlier crash of a process with our pid
  ensure_directory(temporary);
  try {
    fill(temporary);
  } catch (...) {
    remove_quietly(temporary);
    throw;
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    fs::rename(temporary, path, ec);
    if (ec) {
      remove_quietly(temporary);
      io_fail("cannot create", path, ec.message());
    }
    return;
  }
#if defined(__linux__) && defined(RENAME_EXCHANGE)
  // One step: the old folder takes the temporary name, then goes away.
  if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) {
    remove_quietly(temporary);
    return;
  }
  // EINVAL/ENOSYS: the file system or kernel cannot exchange; fall back below.
#endif
  const fs::path old =
      path.parent_path() / (path.filename().string() + ".old-" + std::to_string(::getpid()));
  remove_quietly(old);
  fs::rename(path, old, ec);
  if (ec) {
    remove_quietly(temporary);
    io_fail("cannot replace", path, ec.message());
  }
  fs::rename(temporary, path, ec);
  if (ec) {
    std::error_code restore;
    fs::rename(old, path, restore);
    remove_quietly(temporary);
    io_fail("cannot replace", path, ec.message());
  }
  remove_quietly(old);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) io_fail("cannot read", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) io_fail("cannot read", path, "read failed");
  return text.str();
}

}  // namespace tft
