#include "model/quantile_loss.h"

#include <ATen/ops/maximum.h>
#include <ATen/ops/tensor.h>
#include <c10/util/Exception.h>

namespace tft {

QuantileLossImpl::QuantileLossImpl(const std::vector<double>& quantiles)
    : quantiles_(register_buffer("quantiles", at::tensor(quantiles, at::kFloat))) {
  TORCH_CHECK(!quantiles.empty(), "QuantileLoss: no quantiles");
}

torch::Tensor QuantileLossImpl::forward(const torch::Tensor& prediction,
                                        const torch::Tensor& target) {
  TORCH_CHECK(prediction.dim() == target.dim() + 1 && prediction.size(-1) == num_quantiles(),
              "QuantileLoss: prediction ", prediction.sizes(), " does not match target ",
              target.sizes(), " with ", num_quantiles(), " quantiles");
  const torch::Tensor q = quantiles_.to(prediction.scalar_type());
  const torch::Tensor error = target.unsqueeze(-1) - prediction;  // > 0: under-forecast
  return at::maximum(q * error, (q - 1) * error).mean();
}

}  // namespace tft
