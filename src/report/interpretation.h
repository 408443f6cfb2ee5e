// What the TFT's interpretable parts say about a set of windows (Lim et al. 2021, section 7):
// the mean variable selection weights of the static, encoder (historical) and decoder
// (future) inputs by variable name, and the mean attention of the last attention block by
// key position relative to the first decoder step (-encoder_length ... prediction_length - 1),
// averaged over windows and decoder steps (a key a decoder step cannot see, later than
// itself, counts as 0), plus the same per horizon step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include "model/model_config.h"
#include "model/tft_model.h"

namespace tft {

struct VariableImportance {
  std::string variable;
  double importance = 0.0;  // mean selection weight; a group's weights sum to 1
};

struct Interpretation {
  std::int64_t windows = 0;
  std::int64_t encoder_length = 0;
  std::int64_t prediction_length = 0;
  // In InputSchema order (static_variables(), historical_variables(), future_variables()).
  std::vector<VariableImportance> static_importance;
  std::vector<VariableImportance> encoder_importance;
  std::vector<VariableImportance> decoder_importance;
  // [encoder_length + prediction_length]: entry i is key position i - encoder_length.
  std::vector<double> attention_by_position;
  // [prediction_length][encoder_length + prediction_length]: per decoder step (horizon 1...).
  std::vector<std::vector<double>> attention_by_horizon;

  // {"windows": N, "encoder_length": E, "prediction_length": P,
  //  "static_importance": {"region": 0.61, ...}, "encoder_importance": {...},
  //  "decoder_importance": {...},
  //  "attention": {"positions": [-E, ..., P - 1], "mean": [...], "by_horizon": [[...], ...]}}
  nlohmann::ordered_json to_json() const;
};

class InterpretationAccumulator {
 public:
  explicit InterpretationAccumulator(const ModelConfig& config);
  // Adds the interpretation tensors of one batch (TFTOutput's documented shapes).
  void add(const TFTOutput& output);
  Interpretation result() const;

 private:
  ModelConfig config_;
  std::int64_t windows_ = 0;
  at::Tensor static_sum_, encoder_sum_, decoder_sum_, attention_sum_;  // double, CPU
};

}  // namespace tft
