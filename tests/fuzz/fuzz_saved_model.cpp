// Fuzz target: the saved-model folder loader (SavedModel::load) past its checksums.
//
// A folder's files are verified against SHA256SUMS before anything is parsed, so random bytes
// would only ever meet the checksum. Here the first input byte picks one file of a real
// (tiny) saved model and the rest of the input replaces it:
//   0 model_config.json   1 transforms.json   2 config.yaml   3 weights.pt
//   4 SHA256SUMS itself (the other files intact)
// and for 0-3 SHA256SUMS is rewritten to match, as someone editing a folder by hand and running
// `sha256sum` would. What loads then predicts the tiny data with its own config and
// transforms: the stored files must agree with each other, not only parse.
//
// Contract checked, besides the sanitizers: the folder loads (and predicts, or rejects the
// data with a DataError), or loading fails with the loader's documented errors, tft::IoError
// or tft::ConfigError.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <string>

#include "common/error.h"
#include "common/sha256.h"
#include "data/time_series_dataset.h"
#include "fuzz_support.h"
#include "fuzz_tiny_model.h"
#include "store/saved_model.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kChecksums = "SHA256SUMS";
// The files the first input byte selects, in saved_model.h's order; index 4 is kChecksums.
constexpr const char* kFiles[] = {"model_config.json", "transforms.json", "config.yaml",
                                  "weights.pt"};
constexpr std::size_t kChoices = std::size(kFiles) + 1;

// The tiny model's folder: its files, and where each input's folder is written.
struct Fixture {
  std::map<std::string, std::string> files;  // name -> bytes, SHA256SUMS excluded
  fs::path folder;
};

// SHA256SUMS as save_model_directory writes it ("<hex>  <name>" per line, sha256sum's format).
std::string checksums_of(const std::map<std::string, std::string>& files) {
  std::string text;
  for (const auto& [name, bytes] : files) text += tft::sha256_hex(bytes) + "  " + name + "\n";
  return text;
}

const Fixture& fixture() {
  static const Fixture fixture = [] {
    const tft::fuzz::TinyModel tiny = tft::fuzz::make_tiny_model();
    const fs::path scratch = tft::fuzz::scratch_folder("fuzz_saved_model");
    tft::save_model_directory(scratch / "template", tiny.model, tiny.config, tiny.transforms);
    Fixture f;
    for (std::size_t i = 0; i < std::size(kFiles); ++i) {
      f.files[kFiles[i]] = tft::fuzz::read_bytes(scratch / "template" / kFiles[i]);
      tft::fuzz::offer_seed(std::to_string(i) + "-" + kFiles[i],
                            std::string(1, static_cast<char>(i)) + f.files[kFiles[i]]);
    }
    const std::string checksums = tft::fuzz::read_bytes(scratch / "template" / kChecksums);
    if (checksums != checksums_of(f.files)) {
      tft::fuzz::broken_contract("SHA256SUMS is not written the way this harness writes it");
    }
    tft::fuzz::offer_seed(std::to_string(std::size(kFiles)) + "-" + kChecksums,
                          std::string(1, static_cast<char>(std::size(kFiles))) + checksums);
    f.folder = scratch / "model";
    fs::create_directories(f.folder);
    return f;
  }();
  return fixture;
}

// Forecasts the tiny data with what was loaded, as `tft-train --predict` would.
void predict_tiny_data(tft::SavedModel& saved) {
  try {
    const tft::TimeSeriesDataset dataset =
        tft::fuzz::tiny_dataset(saved.config(), &saved.transforms());
    saved.predict(dataset);
  } catch (const tft::DataError&) {
    // The stored config names columns the tiny data lacks, or the like: a clear rejection.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Fixture& f = fixture();
  std::map<std::string, std::string> files = f.files;
  const std::size_t choice = data[0] % kChoices;
  const std::string replacement = tft::fuzz::as_text(data + 1, size - 1);
  std::string checksums;
  if (choice < std::size(kFiles)) {
    files[kFiles[choice]] = replacement;
    checksums = checksums_of(files);
  } else {
    checksums = replacement;
  }
  for (const auto& [name, bytes] : files) tft::fuzz::write_bytes(f.folder / name, bytes);
  tft::fuzz::write_bytes(f.folder / kChecksums, checksums);

  try {
    tft::SavedModel saved = tft::SavedModel::load(f.folder);
    predict_tiny_data(saved);
  } catch (const tft::IoError&) {
  } catch (const tft::ConfigError&) {
    // Both are the loader's documented rejections (saved_model.h).
  }
  return 0;
}
