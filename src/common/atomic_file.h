// Writing files and folders so that a reader never sees a half-written one: write next to the
// destination under a temporary name (`<name>.tmp-<pid>`), then rename over it. A crash leaves
// either the old or the new version, plus at worst a stray temporary.
//
// Every failure is a tft::IoError naming the path and the reason.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace tft {

// `<path>.tmp-<pid>`: the temporary sibling this process writes before renaming.
std::filesystem::path temporary_sibling(const std::filesystem::path& path);

// Creates `directory` and its parents if missing.
void ensure_directory(const std::filesystem::path& directory);

// Writes `content` to `path` atomically (temporary file, flushed to the disk, then renamed over
// `path`). On failure (a full disk, a read-only folder) `path` keeps its old content and no
// temporary is left behind.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Builds a folder with `fill(temporary_folder)` (an empty folder named `<path>.tmp-<pid>`),
// then puts it in place of `path`. An existing `path` is swapped out in one step where the
// system can (Linux renameat2 RENAME_EXCHANGE) and removed afterwards; elsewhere it is
// renamed aside first and restored if the second rename fails. On any failure the temporary
// folder is removed and `path` is left as it was.
void replace_directory_atomically(const std::filesystem::path& path,
                                  const std::function<void(const std::filesystem::path&)>& fill);

// The whole file as a string (IoError when it cannot be read).
std::string read_file(const std::filesystem::path& path);

}  // namespace tft
