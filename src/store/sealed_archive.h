// LibTorch archives in memory, and "sealed" archive files whose damage is detected.
//
// LibTorch's archive is a zip file, but its reader checks no CRC: a flipped bit inside a
// tensor loads without a word and gives a silently wrong model (measured: 401 of 403 single-bit
// flips spread over a 400 kB archive loaded "fine"). A sealed archive is an outer LibTorch
// archive holding
//   "format"   a string naming what is inside (say "tftrain-snapshot")
//   "version"  an integer
//   "sha256"   the SHA-256 of the payload, as hex
//   "payload"  the inner archive's bytes (a uint8 tensor)
// and loading it checks the digest before the payload is parsed.
//
// Writing goes through write_file_atomically, so a full disk or a read-only folder is an
// IoError and the previous file stays.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

namespace tft {

// The archive as the bytes LibTorch writes to a file. `where` names it in errors.
std::string archive_to_bytes(torch::serialize::OutputArchive& archive, const std::string& where);

// Parses bytes written by archive_to_bytes: IoError naming `where` when they are not one (their
// pickles are checked first: pickle_bounds.h), OutOfMemoryError when the machine has no memory
// for them.
void load_archive_from_bytes(torch::serialize::InputArchive& archive, std::string_view bytes,
                             const std::string& where);

// Writes `payload` sealed, atomically, at `path`.
void save_sealed_archive(const std::filesystem::path& path,
                         torch::serialize::OutputArchive& payload, const std::string& format,
                         std::int64_t version);

// Reads a sealed archive and returns its payload. IoError naming `where` when the file is
// missing, truncated, damaged (digest mismatch), another format or another version.
torch::serialize::InputArchive load_sealed_archive(const std::filesystem::path& path,
                                                   const std::string& format, std::int64_t version,
                                                   const std::string& where);

}  // namespace tft
