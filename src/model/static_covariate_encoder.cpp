#include "model/static_covariate_encoder.h"

namespace tft {
namespace {

GatedResidualNetwork context_grn(int64_t hidden_size, double dropout) {
  return GatedResidualNetwork(hidden_size, hidden_size, hidden_size, dropout);
}

}  // namespace

StaticCovariateEncoderImpl::StaticCovariateEncoderImpl(int64_t num_inputs, int64_t hidden_size,
                                                       double dropout)
    : selection_(register_module(
          "selection",
          VariableSelectionNetwork(num_inputs, hidden_size, dropout, /*with_context=*/false))),
      selection_context_(register_module("selection_context", context_grn(hidden_size, dropout))),
      enrichment_context_(register_module("enrichment_context", context_grn(hidden_size, dropout))),
      state_h_context_(register_module("state_h_context", context_grn(hidden_size, dropout))),
      state_c_context_(register_module("state_c_context", context_grn(hidden_size, dropout))) {}

StaticContexts StaticCovariateEncoderImpl::forward(const torch::Tensor& embedded) {
  auto selected = selection_(embedded);
  return {selection_context_(selected.output), enrichment_context_(selected.output),
          state_h_context_(selected.output), state_c_context_(selected.output), selected.weights};
}

}  // namespace tft
