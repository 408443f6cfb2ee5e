// Static covariate encoder (TFT paper section 4.3): selects among the static variables and
// turns the result into the four context vectors that condition the temporal part of the
// model: c_s (variable selection), c_e (static enrichment), c_h and c_c (the LSTM's initial
// hidden and cell state).
#pragma once

#include "model/grn.h"
#include "model/variable_selection.h"

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tft {

struct StaticContexts {
  torch::Tensor selection;   // c_s [B, hidden]
  torch::Tensor enrichment;  // c_e [B, hidden]
  torch::Tensor state_h;     // c_h [B, hidden]
  torch::Tensor state_c;     // c_c [B, hidden]
  torch::Tensor weights;     // static variable selection weights [B, num_inputs]
};

class StaticCovariateEncoderImpl : public torch::nn::Module {
 public:
  StaticCovariateEncoderImpl(int64_t num_inputs, int64_t hidden_size, double dropout);

  // embedded: [B, num_inputs, hidden] (see InputEmbedding).
  StaticContexts forward(const torch::Tensor& embedded);

 private:
  VariableSelectionNetwork selection_;
  GatedResidualNetwork selection_context_, enrichment_context_, state_h_context_, state_c_context_;
};
TORCH_MODULE(StaticCovariateEncoder);

}  // namespace tft
