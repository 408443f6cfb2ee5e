// A refit (training.init_from, train/refit.h) on the synthetic three-series problem: it starts
// from the saved weights and transforms, is bitwise reproducible, resumes like an uninterrupted
// refit, never writes the saved model's folder, and refuses a contradicting config, a damaged or
// foreign model folder and data that does not fit, before anything is written. New series and
// categories take the unknown bucket, or grow the vocabulary with rows copied from it.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/sha256.h"
#include "config/train_config_io.h"
#include "store/module_state.h"
#include "store/saved_model.h"
#include "train/trainer.h"

#include "train/train_test_support.h"

#include "support/cmocka_cpp.h"

namespace fs = std::filesystem;
using tft::TrainConfig;
using tft::Trainer;
using tft::TrainReport;
using namespace tft::testing;

namespace {

// Every file of a folder, name and bytes: the saved model before and after a refit.
std::string folder_digest(const fs::path& dir) {
  std::string all;
  for (const auto& entry : fs::directory_iterator(dir)) {
    all += entry.path().filename().string() + " " + tft::sha256_hex(read_text(entry.path())) + "\n";
  }
  return all;
}

// The synthetic rows with series a's rows again as a fourth series "d" of a new group.
std::string with_new_series(const std::string& csv) {
  std::string out = csv;
  std::size_t start = csv.find('\n') + 1;
  while (start < csv.size() && csv.compare(start, 2, "a,") == 0) {
    const std::size_t end = csv.find('\n', start) + 1;
    std::string row = csv.substr(start, end - start);
    row.replace(0, 7, "d,new,");  // "a,even," -> "d,new,"
    out += row;
    start = end;
  }
  return out;
}

struct SavedRun {
  fs::path dir;
  fs::path model;
};

// Trains the saved model every test starts from: 2 epochs on 120 rows per series.
SavedRun saved_run(const std::string& name) {
  const fs::path dir = scratch_dir(name);
  write_text(dir / "old.csv", synthetic_csv(120));
  write_text(dir / "new.csv", synthetic_csv(140));
  TrainConfig config = synthetic_config(dir / "old.csv", dir / "old");
  config.training.epochs = 2;
  Trainer(config).train();
  return {dir, dir / "old" / "model"};
}

TrainConfig refit_config(const SavedRun& run, const std::string& csv, const std::string& out) {
  TrainConfig config = synthetic_config(run.dir / csv, run.dir / out);
  config.training.epochs = 2;
  config.training.init_from = run.model.string();
  return config;
}

}  // namespace

TFT_TEST(test_refit_starts_from_the_saved_model_and_is_reproducible) {
  const SavedRun run = saved_run("refit");
  const std::string before = folder_digest(run.model);
  tft::SavedModel saved = tft::SavedModel::load(run.model);

  TrainConfig config = refit_config(run, "new.csv", "refit_a");
  config.training.snapshot_every_steps = 1;
  Trainer first(config);
  assert_true(same_weights(first.model(), saved.model()));
  assert_true(first.dataset().transforms().encoders == saved.transforms().encoders);
  assert_true(first.dataset().transforms().scaler == saved.transforms().scaler);
  assert_true(first.dataset().transforms().target_normalizer ==
              saved.transforms().target_normalizer);
  const TrainReport a = first.train();
  assert_string_equal(a.init_from.c_str(), fs::weakly_canonical(run.model).c_str());
  assert_string_equal(a.init_from_sha256.c_str(),
                      tft::sha256_hex(read_text(run.model / "SHA256SUMS")).c_str());
  const nlohmann::json summary =
      nlohmann::json::parse(read_text(run.dir / "refit_a" / "summary.json"));
  assert_true(summary["init_from"]["sha256"] == a.init_from_sha256);
  assert_false(same_weights(first.model(), saved.model()));  // it trained

  // Same saved model, data and seed: bitwise the same refit.
  config.output.directory = (run.dir / "refit_b").string();
  Trainer second(config);
  const TrainReport b = second.train();
  assert_true(same_weights(first.model(), second.model()));
  assert_memory_equal(&a.final_validation_loss, &b.final_validation_loss, sizeof(double));

  // Stopped in its second epoch and resumed: bitwise the uninterrupted refit.
  config.output.directory = (run.dir / "refit_c").string();
  Trainer third(config);
  TFT_ASSERT_THROWS_WITH(third.train([](const tft::TrainProgress& p) {
    return !(p.kind == tft::TrainProgress::Kind::Step && p.epoch == 2 && p.step == 2);
  }),
                         tft::CancelledError, "cancelled at epoch 2, step 2/");
  Trainer resumed(config);
  const TrainReport c = resumed.train(nullptr, /*resume=*/true);
  assert_int_equal(c.resumed_from_epoch, 1);
  assert_true(same_weights(first.model(), resumed.model()));

  assert_string_equal(folder_digest(run.model).c_str(), before.c_str());  // never written
  fs::remove_all(run.dir);
}

// The saved weights count as epoch 0: a refit whose epochs all score worse keeps them.
TFT_TEST(test_refit_never_ends_worse_than_the_saved_model) {
  const SavedRun run = saved_run("refit_worse");
  tft::SavedModel saved = tft::SavedModel::load(run.model);
  TrainConfig config = refit_config(run, "old.csv", "refit");
  config.training.learning_rate = 5.0;  // every step wrecks the weights
  config.training.lr_schedule.kind = tft::LrScheduleKind::None;
  config.training.gradient_clip_norm = 0.0;
  Trainer trainer(config);
  const TrainReport report = trainer.train();
  assert_int_equal(report.best_epoch, 0);
  assert_true(report.best_validation_loss == report.initial_validation_loss);
  assert_true(report.final_validation_loss > report.initial_validation_loss);
  assert_true(same_weights(trainer.model(), saved.model()));
  fs::remove_all(run.dir);
}

TFT_TEST(test_refit_refuses_what_contradicts_the_saved_model) {
  const SavedRun run = saved_run("refit_config");
  const std::string before = folder_digest(run.model);
  const fs::path out = run.dir / "refit";

  // A key given with another value names itself and the saved value.
  TrainConfig config = refit_config(run, "new.csv", "refit");
  tft::set_config_value(config, "model.hidden_size", "16");
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError,
                         "training.init_from: model.hidden_size is 16 here but 8 in the saved "
                         "model");
  config = refit_config(run, "new.csv", "refit");
  tft::set_config_value(config, "windows.encoder_length", "10");
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError, "windows.encoder_length is 10");
  config = refit_config(run, "new.csv", "refit");
  tft::set_config_value(config, "data.target_normalizer.method", "robust");
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError,
                         "data.target_normalizer.method is robust here but standard");
  // Left at a default (assigned, not given), a key takes the saved model's value; so do auto
  // and the regularisation, which shapes no weight.
  config = refit_config(run, "new.csv", "refit");
  config.model.hidden_size = 16;
  tft::set_config_value(config, "data.target_normalizer.center", "auto");
  tft::set_config_value(config, "model.dropout", "0.3");
  {
    Trainer trainer(config);
    assert_int_equal(trainer.model_config().hidden_size, 8);
    assert_true(trainer.model_config().dropout == 0.3);
  }
  // The output folder must not write the saved model.
  config = refit_config(run, "new.csv", "refit");
  config.output.directory = (run.dir / "old").string();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError, "would be written by this run");
  config.output.directory = run.model.string();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::ConfigError, "choose another output.directory");
  // A dataset loaded by the caller must carry the saved transforms.
  config = refit_config(run, "new.csv", "refit");
  TrainConfig robust = synthetic_config(run.dir / "new.csv", out);
  robust.data.target_normalizer.method = tft::TargetMethod::Robust;
  TFT_ASSERT_THROWS_WITH((Trainer{config, tft::TimeSeriesDataset::load(robust)}), tft::ConfigError,
                         "was not loaded with the saved model's transforms");

  assert_false(fs::exists(out));
  assert_string_equal(folder_digest(run.model).c_str(), before.c_str());
  fs::remove_all(run.dir);
}

TFT_TEST(test_refit_refuses_damaged_or_foreign_models_and_unfitting_data) {
  const SavedRun run = saved_run("refit_bad");
  const fs::path out = run.dir / "refit";
  TrainConfig config = refit_config(run, "new.csv", "refit");

  config.training.init_from = (run.dir / "nowhere").string();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::IoError, "is not a folder");

  // A flipped byte in the weights.
  const fs::path damaged = run.dir / "damaged";
  fs::copy(run.model, damaged);
  std::string weights = read_text(damaged / "weights.pt");
  weights[weights.size() / 2] ^= 1;
  write_text(damaged / "weights.pt", weights);
  config.training.init_from = damaged.string();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::IoError, "weights.pt' is damaged");

  // A model folder from another version of the format, its checksums made to match.
  const fs::path foreign = run.dir / "foreign";
  fs::copy(run.model, foreign);
  std::string model_config = read_text(foreign / "model_config.json");
  const std::size_t version = model_config.find("\"version\": ");
  assert_true(version != std::string::npos);
  model_config.insert(version + std::string("\"version\": ").size(), "9");  // 2 -> 92
  write_text(foreign / "model_config.json", model_config);
  std::string sums = read_text(foreign / "SHA256SUMS");
  const std::string old_digest = tft::sha256_hex(read_text(run.model / "model_config.json"));
  sums.replace(sums.find(old_digest), old_digest.size(), tft::sha256_hex(model_config));
  write_text(foreign / "SHA256SUMS", sums);
  config.training.init_from = foreign.string();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::IoError, "key 'version'");

  // Data without a column the model reads, and a column whose type changed.
  config.training.init_from = run.model.string();
  std::string csv = synthetic_csv(140);
  write_text(run.dir / "no_lagged.csv", [&] {
    std::string text;
    std::size_t start = 0;
    while (start < csv.size()) {  // drop the 6th field, lagged
      const std::size_t end = csv.find('\n', start);
      std::string row = csv.substr(start, end - start);
      std::size_t comma = 0;
      for (int i = 0; i < 5; ++i) comma = row.find(',', comma) + 1;
      row.erase(comma, row.find(',', comma) + 1 - comma);
      text += row + "\n";
      start = end + 1;
    }
    return text;
  }());
  config.data.path = (run.dir / "no_lagged.csv").string();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::DataError, "lagged");
  std::string text_column = csv;
  const std::size_t row_start = text_column.find('\n', text_column.find('\n') + 1) + 1;
  std::size_t field = row_start;
  for (int i = 0; i < 5; ++i) field = text_column.find(',', field) + 1;
  text_column.replace(field, text_column.find(',', field) - field, "many");
  write_text(run.dir / "text.csv", text_column);
  config.data.path = (run.dir / "text.csv").string();
  TFT_ASSERT_THROWS_WITH(Trainer{config}, tft::DataError, "lagged");

  assert_false(fs::exists(out));
  fs::remove_all(run.dir);
}

TFT_TEST(test_refit_new_series_take_the_unknown_bucket_or_grow_the_vocabulary) {
  const SavedRun run = saved_run("refit_new");
  write_text(run.dir / "grown.csv", with_new_series(synthetic_csv(140)));
  tft::SavedModel saved = tft::SavedModel::load(run.model);
  const tft::CategoricalEncoder& saved_series = saved.transforms().encoders.at("series");

  // unknown (the default): the encoders stay; series d gets its own scaler statistics.
  TrainConfig config = refit_config(run, "grown.csv", "unknown");
  {
    Trainer trainer(config);
    assert_true(trainer.dataset().transforms().encoders == saved.transforms().encoders);
    assert_int_equal(trainer.dataset().unknown_category_counts().at("series"), 1);
    assert_int_equal(trainer.dataset().unknown_category_counts().at("group"), 1);
    const tft::StandardScaler& scaler = trainer.dataset().transforms().scaler;
    assert_int_equal(scaler.num_groups(), saved.transforms().scaler.num_groups() + 1);
    assert_true(scaler.find_group({"d"}).has_value());
    for (const char* s : {"a", "b", "c"}) {  // the saved statistics, unchanged
      const std::size_t row = *scaler.find_group({s});
      const std::size_t saved_row = *saved.transforms().scaler.find_group({s});
      for (std::size_t c = 0; c < scaler.columns().size(); ++c) {
        assert_true(scaler.stats(row, c).mean ==
                    saved.transforms().scaler.stats(saved_row, c).mean);
      }
    }
    assert_true(same_weights(trainer.model(), saved.model()));
    trainer.train();
  }

  // grow: d and "new" get the next codes, and rows copied from the unknown bucket's.
  config = refit_config(run, "grown.csv", "grow");
  tft::set_config_value(config, "training.init_categories", "grow");
  Trainer trainer(config);
  const tft::CategoricalEncoder& grown = trainer.dataset().transforms().encoders.at("series");
  assert_int_equal(grown.cardinality(), saved_series.cardinality() + 1);
  assert_int_equal(grown.encode("d"), saved_series.cardinality());
  for (const std::string& s : saved_series.categories()) {
    assert_int_equal(grown.encode(s), saved_series.encode(s));
  }
  assert_true(trainer.dataset().unknown_category_counts().empty());
  const tft::ModuleState now = tft::copy_module_state(*trainer.model());
  const tft::ModuleState before = tft::copy_module_state(*saved.model());
  int grown_tables = 0;
  for (std::size_t i = 0; i < now.parameters.size(); ++i) {
    const at::Tensor& a = now.parameters[i].second;
    const at::Tensor& b = before.parameters[i].second;
    if (a.sizes() == b.sizes()) {
      assert_true(tft::tensors_bitwise_equal(a, b));
      continue;
    }
    ++grown_tables;
    assert_true(tft::tensors_bitwise_equal(a.narrow(0, 0, b.size(0)), b));
    assert_true(tft::tensors_bitwise_equal(a[b.size(0)], b[0]));
  }
  assert_int_equal(grown_tables, 2);  // series and group
  trainer.train();

  // refit: the reals' scalers fitted on this data; the encoders and normaliser stay.
  config = refit_config(run, "new.csv", "refit_scalers");
  tft::set_config_value(config, "training.init_scalers", "refit");
  Trainer refitted(config);
  assert_false(refitted.dataset().transforms().scaler == saved.transforms().scaler);
  assert_true(refitted.dataset().transforms().encoders == saved.transforms().encoders);
  fs::remove_all(run.dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refit_starts_from_the_saved_model_and_is_reproducible),
      cmocka_unit_test(test_refit_never_ends_worse_than_the_saved_model),
      cmocka_unit_test(test_refit_refuses_what_contradicts_the_saved_model),
      cmocka_unit_test(test_refit_refuses_damaged_or_foreign_models_and_unfitting_data),
      cmocka_unit_test(test_refit_new_series_take_the_unknown_bucket_or_grow_the_vocabulary),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
