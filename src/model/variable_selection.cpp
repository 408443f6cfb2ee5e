#include "model/variable_selection.h"

#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/elu.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/stack.h>
#include <c10/util/Exception.h>

#include <functional>

#include "common/torch_compat.h"
#include "model/weight_casts.h"
#include "nn/glu_add_norm.h"
#include "nn/linear_dropout_linear.h"
#include "nn/precision.h"

namespace tft {
namespace {

using Getter = std::function<torch::Tensor(const GatedResidualNetworkImpl&)>;

// [n, ...]: one tensor of each variable's GRN, stacked in variable order.
torch::Tensor stacked(const std::vector<GatedResidualNetwork>& grns, const Getter& get) {
  std::vector<torch::Tensor> tensors;
  tensors.reserve(grns.size());
  for (const auto& grn : grns) tensors.push_back(get(*grn));
  return at::stack(tensors);
}

// A linear layer over all variables flattened ([rows, n * hidden] -> [rows, out]), applied to
// variables whose reals are not multiplied out: for real i, W_i (x_i w_i + b_i) is
// x_i (W_i w_i) + W_i b_i, so the reals cost an [n_reals -> out] product. Inputs come as
// [rows, n_reals] and [rows, n_dense, hidden]: a 2-D product runs the same kernel with and
// without grad mode (at::matmul of a strided 3-D input may not), which keeps checkpointed
// and kept segments bitwise equal.
torch::Tensor linear_over_variables(const torch::Tensor& weight, const torch::Tensor& bias,
                                    const torch::Tensor& reals, const EmbeddedVariables& in,
                                    const torch::Tensor& dense, int64_t hidden) {
  const int64_t out = weight.size(0), n_reals = in.num_reals(), n_dense = in.num_dense();
  const torch::Tensor per_variable = weight.view({out, n_reals + n_dense, hidden});
  torch::Tensor result;
  if (n_reals > 0) {
    const torch::Tensor w_reals = per_variable.narrow(1, 0, n_reals);  // [out, n_reals, hidden]
    const torch::Tensor slope = (w_reals * in.real_weight).sum(-1);    // [out, n_reals]
    torch::Tensor offset = (w_reals * in.real_bias).sum({1, 2});       // [out]
    if (bias.defined()) offset = offset + bias;
    result = at::addmm(offset, reals, slope.t());
  }
  if (n_dense > 0) {
    const torch::Tensor w_dense =
        per_variable.narrow(1, n_reals, n_dense).reshape({out, n_dense * hidden});
    const torch::Tensor flat = dense.reshape({dense.size(0), n_dense * hidden});
    if (result.defined()) {
      result = at::addmm(result, flat, w_dense.t());
    } else {
      result = bias.defined() ? at::addmm(bias, flat, w_dense.t()) : at::mm(flat, w_dense.t());
    }
  }
  return result;
}

}  // namespace

VariableSelectionNetworkImpl::VariableSelectionNetworkImpl(int64_t num_inputs, int64_t hidden_size,
                                                           double dropout, bool with_context)
    : num_inputs_(num_inputs), hidden_size_(hidden_size) {
  TORCH_CHECK(num_inputs > 0, "VariableSelectionNetwork: needs at least one variable");
  if (num_inputs > 1) {
    // All variables flattened in, one logit per variable out.
    weights_grn_ = register_module(
        "weights_grn", GatedResidualNetwork(num_inputs * hidden_size, hidden_size, num_inputs,
                                            dropout, with_context ? hidden_size : 0));
  }
  for (int64_t i = 0; i < num_inputs; ++i) {
    variable_grns_.push_back(
        register_module("variable_grn_" + std::to_string(i),
                        GatedResidualNetwork(hidden_size, hidden_size, hidden_size, dropout)));
  }
}

const GatedResidualNetwork& VariableSelectionNetworkImpl::variable_grn(int64_t i) const {
  TORCH_CHECK(i >= 0 && i < num_inputs_, "VariableSelectionNetwork: no variable ", i);
  return variable_grns_[static_cast<size_t>(i)];
}

VariableSelectionOutput VariableSelectionNetworkImpl::forward(const torch::Tensor& embedded,
                                                              const torch::Tensor& context) {
  TORCH_CHECK(
      embedded.dim() >= 3 && embedded.size(-2) == num_inputs_ && embedded.size(-1) == hidden_size_,
      "VariableSelectionNetwork: expected [B, ..., ", num_inputs_, ", ", hidden_size_, "], got ",
      embedded.sizes());
  EmbeddedVariables variables;
  variables.dense = embedded;
  return select(variables, context);
}

std::vector<torch::Tensor> StackedVariableGrns::tensors() const {
  return {w1, b1, w2, b2, wg, bg, norm_w, norm_b};
}

StackedVariableGrns StackedVariableGrns::from(const std::vector<torch::Tensor>& tensors,
                                              std::size_t first) {
  TORCH_CHECK(tensors.size() >= first + kTensors, "StackedVariableGrns: expected ", kTensors,
              " tensors from index ", first, ", got ", tensors.size());
  const auto tensor = [&](std::size_t k) { return tensors[first + k]; };
  return {tensor(0), tensor(1), tensor(2), tensor(3), tensor(4), tensor(5), tensor(6), tensor(7)};
}

bool VariableSelectionNetworkImpl::groups_variables() const {
  return !variable_grns_.front()->fc1()->quantized();
}

StackedVariableGrns VariableSelectionNetworkImpl::stacked_variable_grns() const {
  // The products' operands stacked, then cast once as a whole when the pass casts its weights
  // (weight_casts.h); the norms' scale and shift stay float32.
  const auto param = [&](const Getter& get) {
    return cast_for_products(stacked(variable_grns_, get));
  };
  StackedVariableGrns s;
  s.w1 = param([](const auto& g) { return g.fc1()->weight; });  // [n, out, in]
  s.b1 = param([](const auto& g) { return g.fc1()->bias; });
  s.w2 = param([](const auto& g) { return g.fc2()->weight; });
  s.b2 = param([](const auto& g) { return g.fc2()->bias; });
  s.wg = param([](const auto& g) { return g.gate_norm()->gate()->linear()->weight; });
  s.bg = param([](const auto& g) { return g.gate_norm()->gate()->linear()->bias; });
  const auto as_is = [&](const Getter& get) { return stacked(variable_grns_, get); };
  s.norm_w = as_is([](const auto& g) { return g.gate_norm()->norm()->weight; });
  s.norm_b = as_is([](const auto& g) { return g.gate_norm()->norm()->bias; });
  return s;
}

VariableSelectionOutput VariableSelectionNetworkImpl::select(const EmbeddedVariables& embedded,
                                                             const torch::Tensor& context,
                                                             const StackedVariableGrns* stacked) {
  const int64_t n_reals = embedded.num_reals(), n_dense = embedded.num_dense();
  TORCH_CHECK(n_reals + n_dense == num_inputs_, "VariableSelectionNetwork: expected ", num_inputs_,
              " variables, got ", n_reals, " reals and ", n_dense, " others");
  TORCH_CHECK(n_dense == 0 || embedded.dense.size(-1) == hidden_size_,
              "VariableSelectionNetwork: embedded variables must be ", hidden_size_, " wide, got ",
              embedded.dense.sizes());
  std::vector<int64_t> leading =
      n_reals > 0 ? embedded.reals.sizes().vec() : embedded.dense.sizes().vec();
  leading.resize(leading.size() - (n_reals > 0 ? 1 : 2));
  TORCH_CHECK(!leading.empty(), "VariableSelectionNetwork: inputs need a batch axis");
  TORCH_CHECK(n_reals == 0 || n_dense == 0 ||
                  embedded.dense.sizes().slice(0, leading.size()) == c10::IntArrayRef(leading),
              "VariableSelectionNetwork: reals ", embedded.reals.sizes(), " and embedded ",
              embedded.dense.sizes(), " disagree on their leading axes");
  if (!groups_variables()) return select_quantized(embedded, context);
  int64_t rows = 1;
  for (const int64_t size : leading) rows *= size;

  const torch::Tensor weights = selection_weights(embedded, context, leading, rows);
  std::vector<int64_t> output_shape = leading;
  output_shape.push_back(hidden_size_);
  const torch::Tensor output =
      weighted_variable_grns(embedded, weights.reshape({rows, num_inputs_}), rows,
                             stacked != nullptr ? *stacked : stacked_variable_grns());
  return {output.view(output_shape), weights};
}

VariableSelectionOutput VariableSelectionNetworkImpl::select_quantized(
    const EmbeddedVariables& embedded, const torch::Tensor& context) {
  const torch::Tensor variables = embedded.materialize();  // [..., n, hidden]
  torch::Tensor weights;
  if (weights_grn_) {
    weights = softmax_in_float(weights_grn_->forward(variables.flatten(-2), context), /*dim=*/-1);
  } else {
    std::vector<int64_t> shape = variables.sizes().vec();
    shape.pop_back();  // [..., 1]
    weights = at::ones(shape, variables.options());
  }
  std::vector<torch::Tensor> processed;
  processed.reserve(variable_grns_.size());
  for (int64_t i = 0; i < num_inputs_; ++i) {
    processed.push_back(variable_grns_[static_cast<size_t>(i)]->forward(variables.select(-2, i)));
  }
  const torch::Tensor output = (at::stack(processed, /*dim=*/-2) * weights.unsqueeze(-1)).sum(-2);
  return {output, weights};
}

torch::Tensor VariableSelectionNetworkImpl::selection_weights(const EmbeddedVariables& embedded,
                                                              const torch::Tensor& context,
                                                              c10::IntArrayRef leading,
                                                              int64_t rows) {
  const auto with_width = [&](const torch::Tensor& t, int64_t width) {  // [rows, w] -> [B, ..., w]
    std::vector<int64_t> shape = leading.vec();
    shape.push_back(width);
    return t.view(shape);
  };
  const auto& any = embedded.reals.defined() ? embedded.reals : embedded.dense;
  if (!weights_grn_) return with_width(at::ones({rows, 1}, any.options()), 1);
  const GatedResidualNetworkImpl& grn = *weights_grn_;
  torch::Tensor reals, dense;
  if (embedded.reals.defined()) reals = embedded.reals.reshape({rows, embedded.num_reals()});
  if (embedded.dense.defined()) {
    dense = embedded.dense.reshape({rows, embedded.num_dense(), hidden_size_});
  }
  const auto over_variables = [&](const QuantizableLinear& linear, int64_t width) {
    return with_width(
        linear_over_variables(product_operand(linear->weight), product_operand(linear->bias), reals,
                              embedded, dense, hidden_size_),
        width);
  };
  const torch::Tensor hidden = over_variables(grn.fc1(), hidden_size_);
  // The skip projection exists unless hidden_size is 1 (then n * hidden == n: identity).
  const torch::Tensor residual =
      grn.skip() ? over_variables(grn.skip(), num_inputs_) : embedded.materialize().flatten(-2);
  return softmax_in_float(weights_grn_->forward_projected(hidden, residual, context), /*dim=*/-1);
}

torch::Tensor VariableSelectionNetworkImpl::weighted_variable_grns(
    const EmbeddedVariables& embedded, const torch::Tensor& weights, int64_t rows,
    const StackedVariableGrns& stacked) {
  const int64_t hidden = hidden_size_, n_reals = embedded.num_reals(),
                n_dense = embedded.num_dense();
  const torch::Tensor &w1 = stacked.w1, &b1 = stacked.b1, &w2 = stacked.w2, &b2 = stacked.b2,
                      &wg = stacked.wg, &bg = stacked.bg, &norm_w = stacked.norm_w,
                      &norm_b = stacked.norm_b;
  const auto& first = *variable_grns_.front();
  const double eps = first.gate_norm()->norm()->options.eps();
  Dropout dropout = first.gate_norm()->gate()->dropout();  // the same rate in every GRN

  // First layer and skip input per variable, [n, rows, hidden]: reals as x (W1 w) + (W1 b + b1)
  // and x w + b, the others through a batched product. Neither of the reals' is kept: each is
  // made row by row where it is used (affine_rows.h), the first layer with its ELU inside
  // linear_dropout_linear, the skip input (their embedding) inside glu_add_norm_weighted.
  AffineRows real_first_layer;
  AffineSkip real_inputs;
  torch::Tensor dense_activated, dense_inputs;
  if (n_reals > 0) {
    // Contiguous, so the rows made from it are too: [n_reals, rows] is a few numbers a row,
    // and a transposed view would lay out every [n_reals, rows, hidden] tensor made from it
    // transposed as well, which the products then copy.
    const torch::Tensor x = embedded.reals.reshape({rows, n_reals}).t().contiguous();
    const torch::Tensor w1_reals = w1.narrow(0, 0, n_reals);
    const torch::Tensor slope = at::bmm(w1_reals, embedded.real_weight.unsqueeze(-1)).squeeze(-1);
    const torch::Tensor offset =
        at::bmm(w1_reals, embedded.real_bias.unsqueeze(-1)).squeeze(-1) + b1.narrow(0, 0, n_reals);
    real_first_layer = {x, slope, offset};
    real_inputs = {x, embedded.real_weight, embedded.real_bias};
  }
  if (n_dense > 0) {
    const torch::Tensor x =
        embedded.dense.reshape({rows, n_dense, hidden}).transpose(0, 1).contiguous();
    dense_activated = at::baddbmm(b1.narrow(0, n_reals, n_dense).unsqueeze(1), x,
                                  w1.narrow(0, n_reals, n_dense).transpose(1, 2));
    dense_inputs = x;
  } else {
    dense_inputs = embedded.real_weight.new_empty({0, rows, hidden});
  }
  // The ELU's input in the second product's dtype: under mixed precision the reals' first layer
  // comes out in float32 (a float32 input times a reduced-precision slope), and is cast before
  // the ELU rather than after, so the ELU runs at half the width and nothing casts its output
  // again (BENCHMARKS.md, issue 40). Otherwise the dtype the first layer has.
  const compat::AutocastState autocast = compat::get_autocast_state(w1.device().type());
  const at::ScalarType elu_dtype =
      autocast.enabled && is_reduced_float(autocast.dtype)
          ? autocast.dtype
          : (n_reals > 0
                 ? c10::promoteTypes(real_first_layer.bias.scalar_type(),
                                     c10::promoteTypes(real_first_layer.scalars.scalar_type(),
                                                       real_first_layer.weight.scalar_type()))
                 : dense_activated.scalar_type());
  if (n_dense > 0) {
    if (dense_activated.scalar_type() != elu_dtype) dense_activated = dense_activated.to(elu_dtype);
    // In place, as in GatedResidualNetwork: only its output is kept for backward.
    at::elu_(dense_activated);
  }
  // The rest of GRN(x) = LayerNorm(x + GLU(W2 ELU(W1 x + b1) + b2)), every variable at once,
  // with the GLU's dropout on its input as in GatedLinearUnit. The second product, the dropout
  // and the gate's product in one function that keeps neither the dropout's output nor the
  // reals' ELU output: two [n, rows, hidden] tensors less per step, made again in backward by
  // one more product and an ELU (linear_dropout_linear.h).
  const double p = dropout->is_training() ? dropout->p() : 0.0;
  const torch::Tensor gate_input =
      n_reals > 0
          ? linear_dropout_linear(real_first_layer, dense_activated, w2, b2, wg, bg, p, elu_dtype)
          : linear_dropout_linear(dense_activated, w2, b2, wg, bg, p);
  // The gating, the skip, a LayerNorm per variable (each with its own scale and shift) and the
  // weighted sum over variables in one function. In float32 under mixed precision, as in
  // GateAddNorm.
  return glu_add_norm_weighted(gate_input, real_inputs, dense_inputs, norm_w, norm_b, weights, eps);
}

}  // namespace tft
