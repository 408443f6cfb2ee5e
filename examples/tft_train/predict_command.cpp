#include "predict_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "report/forecast_csv.h"
#include "store/saved_model.h"

namespace tft_train {

CLI::App* add_predict_command(CLI::App& app, PredictOptions& options) {
  CLI::App* predict = app.add_subcommand(
      "predict", "Forecasts the steps after the data of each series with a saved model.");
  predict->add_option("--model", options.model, "a model folder written by training (DIR/model)")
      ->required()
      ->type_name("DIR");
  predict
      ->add_option("--data", options.data,
                   "data laid out like the training data (default: the training data)")
      ->type_name("FILE");
  predict->add_option("--output", options.output, "where forecast.csv goes (default: predictions)")
      ->type_name("DIR");
  return predict;
}

void run_predict(const PredictOptions& options) {
  tft::SavedModel saved = tft::SavedModel::load(options.model);
  const std::string data =
      options.data.empty() ? std::string()
                           : std::filesystem::absolute(options.data).lexically_normal().string();
  const tft::TimeSeriesDataset dataset = saved.load_dataset(data);
  for (const auto& [column, count] : dataset.unknown_category_counts()) {
    std::fprintf(stderr,
                 "tft-train predict: warning: column '%s': %lld value(s) the model has not "
                 "seen, forecast as its unknown category\n",
                 column.c_str(), static_cast<long long>(count));
  }
  tft::Predictions predictions = saved.predict(dataset);
  auto& forecasts = predictions.forecasts;
  forecasts.erase(std::remove_if(forecasts.begin(), forecasts.end(),
                                 [](const tft::Forecast& f) { return !f.future; }),
                  forecasts.end());

  const std::filesystem::path out(options.output);
  std::filesystem::create_directories(out);
  tft::write_forecast_csv(out / "forecast.csv", dataset, predictions,
                          saved.config().data.group_columns);
  std::printf("%zu series: forecasts of the next %lld steps in %s\n", dataset.series().size(),
              static_cast<long long>(predictions.prediction_length),
              (out / "forecast.csv").string().c_str());
}

}  // namespace tft_train
