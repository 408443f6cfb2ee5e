// What a run keeps on disk, part by part: files and folders replaced atomically, the model
// config as JSON, and an archive loaded without the memory for it.
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "store/model_config_json.h"
#include "store/sealed_archive.h"

#include "support/address_space.h"
#include "support/sanitizers.h"
#include "support/test_files.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using namespace tft::testing;

TFT_TEST(test_atomic_files_and_folders) {
  const fs::path dir = scratch_dir("atomic");
  tft::write_file_atomically(dir / "a.txt", "one");
  tft::write_file_atomically(dir / "a.txt", "two");
  assert_string_equal(tft::read_file(dir / "a.txt").c_str(), "two");
  tft::replace_directory_atomically(dir / "model",
                                    [](const fs::path& d) { write_text(d / "x", "old"); });
  tft::replace_directory_atomically(dir / "model",
                                    [](const fs::path& d) { write_text(d / "y", "new"); });
  assert_false(fs::exists(dir / "model" / "x"));
  assert_string_equal(read_text(dir / "model" / "y").c_str(), "new");
  // A failure while filling leaves the old folder and no temporary.
  try {
    tft::replace_directory_atomically(dir / "model", [](const fs::path& d) {
      write_text(d / "z", "half");
      throw tft::IoError("disk full");
    });
    fail_msg("no error");
  } catch (const tft::IoError&) {
  }
  assert_string_equal(read_text(dir / "model" / "y").c_str(), "new");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++entries;
    assert_true(e.path().filename().string().find(".tmp-") == std::string::npos);
  }
  assert_int_equal(entries, 2);  // a.txt, model
  TFT_ASSERT_THROWS_WITH(tft::read_file(dir / "missing"), tft::IoError, "missing");
  fs::remove_all(dir);
}

TFT_TEST(test_model_config_json_round_trip) {
  tft::ModelConfig c;
  c.hidden_size = 24;
  c.attention_heads = 3;
  c.dropout = 0.15;
  c.decoder_layers = 2;
  c.quantiles = {0.02, 0.5, 0.98};
  c.encoder_length = 30;
  c.prediction_length = 7;
  c.unit_chunks = {{"lstm_encoder", 3}};
  c.schema.target = "sales";
  c.schema.static_categoricals = {{"store", 11, 4}};
  c.schema.known_reals = {"price"};
  c.schema.known_categoricals = {{"day_of_week", 8, 0}};
  c.schema.unknown_reals = {"visits"};
  const tft::ModelConfig back =
      tft::model_config_from_json(nlohmann::json::parse(tft::model_config_to_json(c).dump()));
  assert_int_equal(back.hidden_size, 24);
  assert_true(back.dropout == 0.15);
  assert_true(back.quantiles == c.quantiles);
  assert_int_equal(back.unit_chunks.at("lstm_encoder"), 3);
  assert_int_equal(back.schema.static_categoricals.at(0).cardinality, 11);
  assert_int_equal(back.schema.static_categoricals.at(0).embedding_dim, 4);
  assert_string_equal(back.schema.known_categoricals.at(0).name.c_str(), "day_of_week");
  assert_true(back.unit_names() == c.unit_names());
  nlohmann::json broken = nlohmann::json::parse(tft::model_config_to_json(c).dump());
  broken.erase("hidden_size");
  TFT_ASSERT_THROWS_WITH(tft::model_config_from_json(broken), tft::IoError, "hidden_size");
  // embedding_dropout: saved only where it is on; a file without the key (all older ones) reads
  // as 0, so a model without it is saved byte for byte as before.
  assert_false(tft::model_config_to_json(c).contains("embedding_dropout"));
  assert_true(back.embedding_dropout == 0.0);
  c.embedding_dropout = 0.25;
  const nlohmann::json with = nlohmann::json::parse(tft::model_config_to_json(c).dump());
  assert_true(with.at("embedding_dropout") == 0.25);
  assert_true(tft::model_config_from_json(with).embedding_dropout == 0.25);
}

// With the numbers in an archive's pickles bounded (pickle_bounds.h), a failed allocation while
// loading is the machine's memory and says so (the C API's TFT_ERROR_OUT_OF_MEMORY), not
// "damaged": under an address-space limit that leaves no room for the archive's 64 MiB tensor.
TFT_TEST(test_loading_without_the_memory_is_out_of_memory) {
#ifdef TFT_UNDER_ASAN
  skip();  // ASan's shadow reserves terabytes of address space
#endif
  constexpr std::int64_t kMiB = 1024 * 1024;
  torch::serialize::OutputArchive out;
  out.write("weights", torch::zeros({16 * kMiB}));  // 64 MiB of float32
  const std::string bytes = tft::archive_to_bytes(out, "the test archive");
  rlimit original{};
  assert_int_equal(getrlimit(RLIMIT_AS, &original), 0);
  rlimit limited = original;
  limited.rlim_cur = static_cast<rlim_t>(tft::testing::address_space_in_use() + 32 * kMiB);
  assert_int_equal(setrlimit(RLIMIT_AS, &limited), 0);
  std::string error = "no error";
  bool out_of_memory = false;
  try {
    torch::serialize::InputArchive in;
    tft::load_archive_from_bytes(in, bytes, "'big.pt'");
  } catch (const tft::OutOfMemoryError& e) {
    out_of_memory = true;
    error = e.what();
  } catch (const std::exception& e) {
    error = e.what();
  }
  assert_int_equal(setrlimit(RLIMIT_AS, &original), 0);
  if (!out_of_memory) fail_msg("expected an OutOfMemoryError, got: %s", error.c_str());
  assert_true(error.rfind("loading 'big.pt': ", 0) == 0);
  // With the memory, the same bytes load.
  torch::serialize::InputArchive in;
  tft::load_archive_from_bytes(in, bytes, "'big.pt'");
  at::Tensor weights;
  in.read("weights", weights);
  assert_int_equal(weights.numel(), 16 * kMiB);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_atomic_files_and_folders),
      cmocka_unit_test(test_model_config_json_round_trip),
      cmocka_unit_test(test_loading_without_the_memory_is_out_of_memory),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
