// What a run keeps on disk, part by part: files and folders replaced atomically, and the model
// config as JSON.
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

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_atomic_files_and_folders),
      cmocka_unit_test(test_model_config_json_round_trip),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
