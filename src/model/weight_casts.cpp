#include "model/weight_casts.h"

#include "model/quantizable_linear.h"
#include "model/variable_selection.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/rnn.h>

#include <unordered_set>

namespace tft {

WeightCasts::WeightCasts(const std::vector<at::Tensor>& parameters, at::ScalarType dtype)
    : dtype_(dtype) {
  casts_.reserve(parameters.size());
  for (const at::Tensor& p : parameters) {
    if (p.defined() && p.scalar_type() != dtype)
      casts_.emplace(p.unsafeGetTensorImpl(), p.to(dtype));
  }
}

const at::Tensor* WeightCasts::find(const at::Tensor& parameter) const {
  if (!parameter.defined()) return nullptr;
  const auto it = casts_.find(parameter.unsafeGetTensorImpl());
  return it == casts_.end() ? nullptr : &it->second;
}

at::Tensor product_operand(const at::Tensor& parameter) {
  const auto& casts = ThreadSlot<WeightCasts>::current();
  if (!casts) return parameter;
  const at::Tensor* cast = casts->find(parameter);
  return cast != nullptr ? *cast : parameter;
}

at::Tensor cast_for_products(const at::Tensor& t) {
  const auto& casts = ThreadSlot<WeightCasts>::current();
  if (!casts || !t.defined() || t.scalar_type() == casts->dtype()) return t;
  return t.to(casts->dtype());
}

std::vector<at::Tensor> product_parameters(const torch::nn::Module& root) {
  const std::vector<std::shared_ptr<torch::nn::Module>> modules =
      root.modules(/*include_self=*/true);
  std::unordered_set<const torch::nn::Module*> stacked;  // read stacked, cast as a whole
  for (const auto& module : modules) {
    if (const auto* selection = module->as<VariableSelectionNetworkImpl>()) {
      if (!selection->groups_variables()) continue;
      for (std::int64_t i = 0; i < selection->num_inputs(); ++i) {
        for (const auto& inner : selection->variable_grn(i)->modules(/*include_self=*/true)) {
          stacked.insert(inner.get());
        }
      }
    }
  }
  std::vector<at::Tensor> parameters;
  for (const auto& module : modules) {
    if (const auto* linear = module->as<QuantizableLinearImpl>()) {
      if (linear->quantized() || stacked.count(module.get()) != 0) continue;
      parameters.push_back(linear->weight);
      if (linear->bias.defined()) parameters.push_back(linear->bias);
    } else if (const auto* lstm = module->as<torch::nn::LSTMImpl>()) {
      for (const at::Tensor& weight : lstm->all_weights()) parameters.push_back(weight);
    }
  }
  return parameters;
}

}  // namespace tft
