// Mixed precision (training.precision): which dtype the model's products run in, with
// LibTorch's autocast doing the casting, as Lightning's precision="bf16-mixed" / "16-mixed" do.
//
// Master weights, optimizer state, the loss and quantile arithmetic stay float32 in every mode.
// Inside the model, autocast runs matrix products (linear, matmul, bmm, baddbmm) and the LSTM
// (mkldnn_rnn on the CPU, cuDNN on CUDA) in the reduced dtype; the blocks pick the dtype of
// the rest deliberately: softmax in float32 (softmax_in_float), the residual sums before each
// layer and group norm and the norms themselves in float32 (reduced_to_float, as CUDA's
// autocast runs layer_norm; LibTorch 1.13's CPU norms also refuse a bfloat16 input with float32
// weights), and the model's outputs are handed back in float32.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace tft {

enum class Precision {
  Float32,    // "32": every op in float32 (the default)
  Bf16Mixed,  // "bf16-mixed": products in bfloat16; CPU and CUDA
  Fp16Mixed,  // "16-mixed": products in float16 with dynamic loss scaling; CUDA only
};

// "32", "bf16-mixed", "16-mixed" (Lightning's names).
const char* to_string(Precision precision);
// The inverse of to_string; also accepts Lightning's "32-true". Nothing for another text.
std::optional<Precision> precision_from_string(const std::string& text);

// The dtype autocast runs products in, or nothing for Float32.
std::optional<at::ScalarType> autocast_dtype(Precision precision);

// Whether `dtype` is one of the reduced floating types mixed precision produces.
bool is_reduced_float(at::ScalarType dtype);

// `t` in float32 when it is bfloat16 or float16, else `t` itself (float64 models stay float64).
at::Tensor reduced_to_float(const at::Tensor& t);

// Softmax over `dim`, computed and returned in float32 when `x` is bfloat16 or float16 (CPU
// autocast would run it in the reduced dtype); otherwise in x's dtype, exactly as at::softmax.
at::Tensor softmax_in_float(const at::Tensor& x, std::int64_t dim);

// Autocast on `device` for this scope, in `precision`'s dtype (nothing for Float32); the
// previous state comes back at the end. Autocast's cache of cast weights stays off inside: a
// cast cached in a checkpointed segment's graph-free first pass would have no graph, and the
// cache outlives the step. The model casts its weights once per pass itself, in the graph
// (model/weight_casts.h); what autocast casts here is the activations.
class AutocastScope {
 public:
  AutocastScope(Precision precision, c10::DeviceType device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
  bool previous_cache_ = true;
};

}  // namespace tft
