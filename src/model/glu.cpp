#include "model/glu.h"

#include <ATen/ops/glu.h>

namespace tft {

GatedLinearUnitImpl::GatedLinearUnitImpl(int64_t input_size, int64_t output_size, double dropout)
    : dropout_(register_module("dropout", Dropout(dropout))),
      fc_(register_module("fc", QuantizableLinear(input_size, 2 * output_size))) {}

torch::Tensor GatedLinearUnitImpl::forward(const torch::Tensor& x) {
  // at::glu gates the first half with the sigmoid of the second half.
  return at::glu(project(x), /*dim=*/-1);
}

torch::Tensor GatedLinearUnitImpl::project(const torch::Tensor& x) { return fc_(dropout_(x)); }

}  // namespace tft
