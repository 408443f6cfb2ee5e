// model.output_init: a model started at the center forecasts the target's centre (0 in the
// normalised units) until its first step, and learns from there; ModelConfig's default, the
// one tests and benchmarks get, is a random head.
#include "model/model_config.h"
#include "model/quantile_loss.h"
#include "model/tft_model.h"
#include "model_test_support.h"

#include <torch/optim/adam.h>
#include <torch/types.h>

#include <cstdio>
#include <string>

#include "support/cmocka_cpp.h"  // last: see the header

using tft::ModelConfig;
using tft::OutputInit;
using tft::TFTModel;
using tft::testing::full_schema;
using tft::testing::random_batch;
using tft::testing::small_config;

namespace {

ModelConfig config_with(OutputInit output_init) {
  ModelConfig c = small_config(full_schema(), 12, 5);
  c.dropout = 0.0;
  c.output_init = output_init;
  return c;
}

double largest_abs(const torch::Tensor& t) {
  return t.defined() ? t.abs().max().item<double>() : 0.0;
}

}  // namespace

TFT_TEST(a_model_started_at_the_center_forecasts_zero) {
  const ModelConfig c = config_with(OutputInit::Center);
  torch::manual_seed(3);
  TFTModel model(c);
  model->train();
  const auto batch = random_batch(c, 4);
  const auto prediction = model->forward(batch).prediction;
  assert_true(largest_abs(prediction) == 0.0);
  // The first step's gradient reaches the head only: every other weight waits a step.
  tft::QuantileLoss(c.quantiles)(prediction, torch::randn({4, c.prediction_length})).backward();
  for (const auto& item : model->named_parameters()) {
    const bool head = item.key().rfind("quantile_head.", 0) == 0;
    const double largest = largest_abs(item.value().grad());
    if (head != (largest > 0.0)) fail_msg("%s: largest gradient %g", item.key().c_str(), largest);
  }
}

TFT_TEST(a_random_head_is_model_configs_default) {
  assert_true(ModelConfig().output_init == OutputInit::Uniform);
  const ModelConfig c = config_with(OutputInit::Uniform);
  torch::manual_seed(3);
  TFTModel model(c);
  assert_true(largest_abs(model->forward(random_batch(c, 4)).prediction) > 0.0);
}

// From the centre, the model still fits a fixed batch: 200 Adam steps take the loss below a
// fifth of the first.
TFT_TEST(a_model_started_at_the_center_learns) {
  const ModelConfig c = config_with(OutputInit::Center);
  torch::manual_seed(4);
  TFTModel model(c);
  model->train();
  const auto batch = random_batch(c, 8);
  const auto target = torch::randn({8, c.prediction_length});
  tft::QuantileLoss loss_fn(c.quantiles);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
  double first = 0.0, last = 0.0;
  for (int step = 0; step < 200; ++step) {
    optimizer.zero_grad();
    auto loss = loss_fn(model->forward(batch).prediction, target);
    loss.backward();
    optimizer.step();
    last = loss.item<double>();
    if (step == 0) first = last;
  }
  std::printf("  loss %.5f -> %.5f in 200 Adam steps\n", first, last);
  assert_true(last < 0.2 * first);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_model_started_at_the_center_forecasts_zero),
      cmocka_unit_test(a_random_head_is_model_configs_default),
      cmocka_unit_test(a_model_started_at_the_center_learns),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
