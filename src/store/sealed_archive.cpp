#include "store/sealed_archive.h"

#include <cstring>
#include <exception>
#include <new>

#include <ATen/ATen.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/format.h"
#include "common/sha256.h"
#include "common/torch_errors.h"
#include "store/pickle_bounds.h"

namespace tft {

namespace fs = std::filesystem;

std::string archive_to_bytes(torch::serialize::OutputArchive& archive, const std::string& where) {
  std::string bytes;
  // Nothing may be thrown into LibTorch's zip writer: an exception there unwinds through the
  // writer's destructor, which finishes the archive, throws again and so ends the process
  // (std::terminate; found under an address-space limit). A failed append is remembered, the
  // rest of the archive is dropped, and the failure is raised once the writer is done.
  bool out_of_memory = false;
  try {
    archive.save_to([&bytes, &out_of_memory](const void* data, std::size_t size) {
      if (out_of_memory) return size;
      try {
        bytes.append(static_cast<const char*>(data), size);
      } catch (const std::bad_alloc&) {
        out_of_memory = true;
      }
      return size;
    });
  } catch (const c10::Error& e) {
    throw IoError("cannot serialise " + where + ": " + e.what_without_backtrace());
  }
  if (out_of_memory) {
    throw OutOfMemoryError("serialising " + where + ": no memory for more than " +
                           std::to_string(bytes.size()) + " bytes of it (" +
                           format_bytes(static_cast<std::int64_t>(bytes.size())) + ")");
  }
  return bytes;
}

void load_archive_from_bytes(torch::serialize::InputArchive& archive, std::string_view bytes,
                             const std::string& where) {
  try {
    check_archive_pickles(bytes, where);
    archive.load_from(bytes.data(), bytes.size());
  } catch (const Error&) {
    throw;  // check_archive_pickles' refusal, which names the record
  } catch (const std::exception& e) {
    // With the numbers in the pickles bounded first, a failed allocation is the machine's memory,
    // not the file (a host gets TFT_ERROR_OUT_OF_MEMORY, not "damaged").
    if (auto out_of_memory = out_of_memory_in(e, "loading " + where)) throw *out_of_memory;
    // Anything else says the bytes are no archive LibTorch reads: its c10::Error, or, for a
    // damaged pickle naming a type TorchScript's parser rejects, a torch::jit::ErrorReport (a
    // std::exception but not a c10::Error; found under ASan, where the bit flips of
    // test_damaged_files land at other offsets); fuzz_snapshot found std::out_of_range for an
    // attribute the archive's class does not declare.
    const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
    throw IoError(where + ": not a readable LibTorch archive (truncated or damaged?): " +
                  (torch_error != nullptr ? torch_error_text(*torch_error) : e.what()));
  }
}

void save_sealed_archive(const fs::path& path, torch::serialize::OutputArchive& payload,
                         const std::string& format, std::int64_t version) {
  const std::string where = "'" + path.string() + "'";
  std::string bytes = archive_to_bytes(payload, where);
  const std::string digest = sha256_hex(bytes);
  // from_blob borrows `bytes`, which outlives the serialisation below.
  const at::Tensor payload_tensor = at::from_blob(
      bytes.data(), {static_cast<std::int64_t>(bytes.size())}, at::TensorOptions(at::kByte));
  torch::serialize::OutputArchive sealed;
  sealed.write("format", c10::IValue(format));
  sealed.write("version", c10::IValue(version));
  sealed.write("sha256", c10::IValue(digest));
  sealed.write("payload", payload_tensor);
  write_file_atomically(path, archive_to_bytes(sealed, where));
}

torch::serialize::InputArchive load_sealed_archive(const fs::path& path, const std::string& format,
                                                   std::int64_t version, const std::string& where) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw IoError(where + ": no such file");
  torch::serialize::InputArchive sealed;
  load_archive_from_bytes(sealed, read_file(path), where);
  c10::IValue stored_format, stored_version, digest;
  if (!sealed.try_read("format", stored_format) || !stored_format.isString() ||
      stored_format.toStringRef() != format) {
    throw IoError(where + ": not a " + format + " file");
  }
  if (!sealed.try_read("version", stored_version) || !stored_version.isInt() ||
      stored_version.toInt() != version) {
    throw IoError(where + ": unsupported " + format + " version (this build reads version " +
                  std::to_string(version) + ")");
  }
  at::Tensor payload;
  if (!sealed.try_read("sha256", digest) || !digest.isString() ||
      !sealed.try_read("payload", payload) || payload.scalar_type() != at::kByte ||
      payload.dim() != 1) {
    throw IoError(where + ": damaged (its checksum or payload is missing)");
  }
  payload = payload.contiguous();
  const std::string_view bytes(reinterpret_cast<const char*>(payload.data_ptr<std::uint8_t>()),
                               static_cast<std::size_t>(payload.numel()));
  if (sha256_hex(bytes) != digest.toStringRef()) {
    throw IoError(where +
                  ": damaged (its SHA-256 does not match the one stored when it was "
                  "written: the file changed or was corrupted since)");
  }
  torch::serialize::InputArchive inner;
  load_archive_from_bytes(inner, bytes, where);
  return inner;
}

}  // namespace tft
