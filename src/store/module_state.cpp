#include "store/module_state.h"

#include "nn/fake_quantizer.h"

#include <cstring>

#include <torch/utils.h>

#include "common/error.h"

namespace tft {

namespace {

std::string shape_text(const at::Tensor& t) {
  std::string s = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(t.size(d));
  }
  return s + "]";
}

void load_list(const std::vector<std::pair<std::string, at::Tensor>>& from,
               torch::OrderedDict<std::string, at::Tensor> into, const char* kind,
               const std::string& where) {
  if (from.size() != into.size()) {
    throw IoError(where + ": holds " + std::to_string(from.size()) + " " + kind + ", the model " +
                  std::to_string(into.size()));
  }
  torch::NoGradGuard no_grad;
  for (const auto& [name, value] : from) {
    at::Tensor* target = into.find(name);
    if (target == nullptr) throw IoError(where + ": the model has no " + kind + " '" + name + "'");
    if (target->sizes() != value.sizes()) {
      throw IoError(where + ": " + kind + " '" + name + "' has shape " + shape_text(value) +
                    ", the model's is " + shape_text(*target));
    }
    target->copy_(value);
  }
}

}  // namespace

bool tensors_bitwise_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  const at::Tensor x = a.detach().cpu().contiguous();
  const at::Tensor y = b.detach().cpu().contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

ModuleState copy_module_state(const torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  ModuleState state;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    state.parameters.emplace_back(item.key(), item.value().detach().clone());
  }
  for (const auto& item : module.named_buffers(/*recurse=*/true)) {
    state.buffers.emplace_back(item.key(), item.value().detach().clone());
  }
  return state;
}

void load_module_state(torch::nn::Module& module, const ModuleState& state,
                       const std::string& where) {
  load_list(state.parameters, module.named_parameters(true), "parameters", where);
  load_list(state.buffers, module.named_buffers(true), "buffers", where);
  // Fake quantizers keep on the host whether their buffers say they are calibrated.
  refresh_fake_quantizers(module);
}

void write_module_state(torch::serialize::OutputArchive& archive, const ModuleState& state) {
  torch::serialize::OutputArchive parameters, buffers;
  for (const auto& [name, value] : state.parameters) parameters.write(name, value.cpu());
  for (const auto& [name, value] : state.buffers) buffers.write(name, value.cpu(), true);
  archive.write("parameters", parameters);
  archive.write("buffers", buffers);
}

ModuleState read_module_state(torch::serialize::InputArchive& archive,
                              const torch::nn::Module& module, const std::string& where) {
  ModuleState state;
  torch::serialize::InputArchive parameters, buffers;
  if (!archive.try_read("parameters", parameters) || !archive.try_read("buffers", buffers)) {
    throw IoError(where + ": no model weights (parameters and buffers) in it");
  }
  for (const auto& item : module.named_parameters(true)) {
    at::Tensor value;
    if (!parameters.try_read(item.key(), value)) {
      throw IoError(where + ": parameter '" + item.key() + "' is missing");
    }
    state.parameters.emplace_back(item.key(), value);
  }
  for (const auto& item : module.named_buffers(true)) {
    at::Tensor value;
    if (!buffers.try_read(item.key(), value, true)) {
      throw IoError(where + ": buffer '" + item.key() + "' is missing");
    }
    state.buffers.emplace_back(item.key(), value);
  }
  return state;
}

bool module_states_equal(const ModuleState& a, const ModuleState& b) {
  auto same = [](const auto& x, const auto& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i].first != y[i].first) return false;
      const at::Tensor& p = x[i].second;
      const at::Tensor& q = y[i].second;
      if (p.sizes() != q.sizes() || p.scalar_type() != q.scalar_type()) return false;
      if (!tensors_bitwise_equal(p, q)) return false;
    }
    return true;
  };
  return same(a.parameters, b.parameters) && same(a.buffers, b.buffers);
}

}  // namespace tft
