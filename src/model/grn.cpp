#include "model/grn.h"

#include <ATen/ops/elu.h>
#include <c10/util/Exception.h>

namespace tft {

GatedResidualNetworkImpl::GatedResidualNetworkImpl(int64_t input_size, int64_t hidden_size,
                                                   int64_t output_size, double dropout,
                                                   int64_t context_size)
    : fc1_(register_module("fc1", QuantizableLinear(input_size, hidden_size))),
      fc2_(register_module("fc2", QuantizableLinear(hidden_size, hidden_size))),
      gate_norm_(register_module("gate_norm", GateAddNorm(hidden_size, output_size, dropout))) {
  if (context_size > 0) {
    context_ =
        register_module("context", QuantizableLinear(context_size, hidden_size, /*bias=*/false));
  }
  if (input_size != output_size) {
    skip_ = register_module("skip", QuantizableLinear(input_size, output_size));
  }
}

torch::Tensor GatedResidualNetworkImpl::forward(const torch::Tensor& x,
                                                const torch::Tensor& context) {
  return forward_projected(fc1_(x), skip_ ? skip_(x) : x, context);
}

torch::Tensor GatedResidualNetworkImpl::forward_projected(const torch::Tensor& fc1_output,
                                                          const torch::Tensor& residual,
                                                          const torch::Tensor& context) {
  torch::Tensor h = fc1_output;
  if (context.defined()) {
    TORCH_CHECK(context_,
                "GatedResidualNetwork: a context was given to a network built without "
                "one (context_size 0)");
    torch::Tensor c = context_(context);
    // [B, hidden] -> [B, 1, ..., hidden] so it broadcasts over time (and variables).
    while (c.dim() < h.dim()) c = c.unsqueeze(1);
    h = h + c;
  }
  // In place: autograd then keeps the ELU's output alone, which fc2 keeps anyway, rather than its
  // input as well (one [..., hidden] tensor less per GRN until backward).
  h = fc2_(at::elu_(h));
  return gate_norm_(h, residual);
}

}  // namespace tft
