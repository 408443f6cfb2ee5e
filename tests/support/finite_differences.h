// Gradients against central differences, in double precision: for a scalar function f of some
// inputs, autograd's gradient of every element of every input is compared with
// (f(v + step) - f(v - step)) / (2 step). For the fused autograd functions of src/nn, whose
// backward is written by hand. Include after cmocka (support/cmocka_cpp.h).
#pragma once

#include <torch/autograd.h>
#include <torch/types.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tft::testing {

// f: a double scalar from `inputs` (double tensors that require grad), the same value for the
// same inputs (reseed any generator it draws from). Fails the test at the first element whose
// gradients differ by more than 1e-6 * (1 + |numeric|); `label` names the case.
inline void check_gradients_by_central_differences(const std::function<torch::Tensor()>& f,
                                                   const std::vector<torch::Tensor>& inputs,
                                                   const std::string& label) {
  const std::vector<torch::Tensor> analytic = torch::autograd::grad({f()}, inputs);
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    torch::Tensor flat = inputs[k].view(-1);
    const torch::Tensor g = analytic[k].reshape(-1);
    for (std::int64_t i = 0; i < flat.numel(); ++i) {
      const double v = flat[i].item<double>(), step = 1e-6;
      flat[i] = v + step;
      const double up = f().item<double>();
      flat[i] = v - step;
      const double down = f().item<double>();
      flat[i] = v;
      const double numeric = (up - down) / (2 * step);
      const double got = g[i].item<double>();
      if (std::abs(numeric - got) > 1e-6 * (1 + std::abs(numeric))) {
        fail_msg("%s: input %zu element %lld: analytic %.10g, numeric %.10g", label.c_str(), k,
                 static_cast<long long>(i), got, numeric);
      }
    }
  }
}

}  // namespace tft::testing
