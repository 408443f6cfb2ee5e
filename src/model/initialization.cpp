#include "model/initialization.h"

#include "common/error.h"
#include "model/quantizable_linear.h"

#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/rnn.h>
#include <torch/utils.h>

#include <cmath>
#include <string>

namespace tft {
namespace {

void uniform(at::Tensor& tensor, double bound, at::Generator& generator) {
  tensor.uniform_(-bound, bound, generator);
}

// One module's own parameters (not its children's).
void initialize_own(const std::string& name, torch::nn::Module& module, at::Generator& generator) {
  if (module.named_parameters(/*recurse=*/false).is_empty()) return;
  if (auto* linear = module.as<torch::nn::Linear>()) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(linear->options.in_features()));
    uniform(linear->weight, bound, generator);
    if (linear->bias.defined()) uniform(linear->bias, bound, generator);
  } else if (auto* quantizable = module.as<QuantizableLinear>()) {  // the same rule
    const double bound = 1.0 / std::sqrt(static_cast<double>(quantizable->in_features()));
    uniform(quantizable->weight, bound, generator);
    if (quantizable->bias.defined()) uniform(quantizable->bias, bound, generator);
  } else if (auto* lstm = module.as<torch::nn::LSTM>()) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(lstm->options.hidden_size()));
    for (auto& parameter : lstm->parameters(/*recurse=*/false)) {
      uniform(parameter, bound, generator);
    }
  } else if (auto* embedding = module.as<torch::nn::Embedding>()) {
    embedding->weight.normal_(0.0, 1.0, generator);
  } else if (module.as<torch::nn::LayerNorm>() != nullptr) {
    return;
  } else if (auto* own = dynamic_cast<InitializedModule*>(&module)) {
    own->initialize_own_parameters(generator);
  } else {
    throw InvalidArgumentError("initialize_parameters: no rule for the parameters of module '" +
                               name + "' (" + module.name() + ")");
  }
}

}  // namespace

void initialize_parameters(torch::nn::Module& root, at::Generator generator) {
  torch::NoGradGuard no_grad;
  // The root by reference: it may be under construction, not yet owned by a shared_ptr, which
  // named_modules(include_self = true) requires.
  initialize_own("", root, generator);
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    initialize_own(item.key(), *item.value(), generator);
  }
}

}  // namespace tft
