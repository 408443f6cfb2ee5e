// A module's named parameters and buffers ("historical_selection.grn.fc1.weight", ...) as one
// flat list: copied (to keep the best epoch's weights), written to and read from LibTorch
// archives (saved models and snapshots).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

namespace tft {

struct ModuleState {
  std::vector<std::pair<std::string, at::Tensor>> parameters;
  std::vector<std::pair<std::string, at::Tensor>> buffers;
};

// Detached copies of every parameter and buffer (same device).
ModuleState copy_module_state(const torch::nn::Module& module);

// Copies `state` into the module's tensors in place (their storage, device and autograd
// identity stay; an optimizer holding them is unaffected), and refreshes the module's fake
// quantizers (model/fake_quantizer.h). IoError naming the tensor when one is missing or has
// another shape.
void load_module_state(torch::nn::Module& module, const ModuleState& state,
                       const std::string& where);

// Writes `state` into `archive`: a nested archive "parameters" and one "buffers", each keyed
// by the tensor names. Tensors are written from the CPU.
void write_module_state(torch::serialize::OutputArchive& archive, const ModuleState& state);

// Reads what write_module_state wrote for a module with these tensor names (IoError naming
// `where` and the tensor when one is missing).
ModuleState read_module_state(torch::serialize::InputArchive& archive,
                              const torch::nn::Module& module, const std::string& where);

// Same shape, dtype and bytes (NaN payloads and the sign of zero included).
bool tensors_bitwise_equal(const at::Tensor& a, const at::Tensor& b);

// True when both hold the same names and bitwise equal tensors.
bool module_states_equal(const ModuleState& a, const ModuleState& b);

}  // namespace tft
