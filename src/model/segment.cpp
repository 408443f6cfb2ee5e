#include "model/segment.h"

#include "model/weight_casts.h"

#include <ATen/Context.h>
#include <ATen/core/ivalue.h>
#include <ATen/ops/cat.h>
#include <c10/util/irange.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/graph_task.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace tft {
namespace {

using checkpoint::SegmentFn;
using checkpoint::TensorVector;
using torch::autograd::AutogradContext;
using torch::autograd::Edge;
using torch::autograd::edge_list;
using torch::autograd::variable_list;

bool requires_grad(const at::Tensor& t) { return t.defined() && t.requires_grad(); }

bool is_differentiable_type(const at::Tensor& t) {
  return at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type());
}

// What the backward of a kept segment needs: where its outputs' graph starts and where its
// inputs' and parameters' gradients are to be captured. Only graph edges are held, never the
// output tensors themselves, so an output the caller drops (say, after concatenating chunks)
// is freed just as in a plain graph; the graph's own saved tensors stay until backward.
struct KeptSegment : torch::CustomClassHolder {
  std::size_t num_inputs = 0;
  std::size_t num_params = 0;
  std::vector<Edge> output_edges;  // per output; no function when it has no graph
  edge_list targets;               // gradient accumulators of the leaves that fn used
  std::vector<std::size_t> target_slot;
};

// The un-checkpointed twin of tft::checkpoint's recompute function: one autograd node per
// segment with the same inputs, parameters and outputs; its backward differentiates the graph
// fn built in forward instead of a recomputed one.
class KeptSegmentFunction : public torch::autograd::Function<KeptSegmentFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, at::TensorList inputs, at::TensorList params,
                               const SegmentFn* fn) {
    auto state = c10::make_intrusive<KeptSegment>();
    state->num_inputs = inputs.size();
    state->num_params = params.size();

    // The segment's graph ends at fresh leaves aliasing the inputs, exactly like the leaves
    // a recompute starts from.
    TensorVector leaves;
    leaves.reserve(inputs.size());
    for (const auto& input : inputs) {
      if (!input.defined()) {
        leaves.emplace_back();
        continue;
      }
      at::Tensor leaf = input.detach();
      leaf.requires_grad_(input.requires_grad());
      leaves.push_back(std::move(leaf));
    }

    TensorVector outputs;
    {
      torch::autograd::AutoGradMode grad_on(true);  // Function::apply turned it off
      outputs = (*fn)(leaves);
    }

    for (const auto i : c10::irange(leaves.size())) {
      if (!requires_grad(leaves[i])) continue;
      if (auto accumulator = torch::autograd::impl::try_get_grad_accumulator(leaves[i])) {
        state->targets.emplace_back(std::move(accumulator), 0);
        state->target_slot.push_back(i);
      }
    }
    for (const auto i : c10::irange(params.size())) {
      if (!requires_grad(params[i])) continue;
      // A parameter's gradient accumulator (when fn used it), or where the graph of a cast of
      // one begins (weight_casts.h): the gradient is captured there, the cast's own backward
      // runs once in the outer graph.
      Edge target = params[i].is_leaf()
                        ? Edge(torch::autograd::impl::try_get_grad_accumulator(params[i]), 0)
                        : torch::autograd::impl::gradient_edge(params[i]);
      if (target.function) {
        state->targets.push_back(std::move(target));
        state->target_slot.push_back(state->num_inputs + i);
      }
    }

    TensorVector results, non_differentiable;
    results.reserve(outputs.size());
    for (auto& out : outputs) {
      if (!out.defined()) {
        state->output_edges.emplace_back();
        results.emplace_back();
        continue;
      }
      state->output_edges.push_back(requires_grad(out) ? torch::autograd::impl::gradient_edge(out)
                                                       : Edge());
      // A new tensor over the same storage: the returned tensor gets this node as its history,
      // the segment's own graph stays reachable only through the edges above.
      results.push_back(out.detach());
      if (!is_differentiable_type(out)) non_differentiable.push_back(results.back());
    }
    outputs.clear();
    if (!non_differentiable.empty()) ctx->mark_non_differentiable(non_differentiable);
    ctx->set_materialize_grads(false);
    ctx->saved_data["segment"] = c10::IValue::make_capsule(state);
    return results;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    // Grad mode on entry is the caller's create_graph.
    const bool create_graph = torch::autograd::GradMode::is_enabled();
    // Raises "Trying to backward through the graph a second time" once the buffers are freed,
    // just as the checkpointing function does.
    (void)ctx->get_saved_variables();
    auto state =
        c10::static_intrusive_pointer_cast<KeptSegment>(ctx->saved_data.at("segment").toCapsule());
    // Keep the segment's graph for another backward only when the caller keeps the outer one.
    const bool keep_graph = create_graph || torch::autograd::get_current_graph_task_keep_graph();

    edge_list roots;
    variable_list root_grads;
    for (const auto i : c10::irange(state->output_edges.size())) {
      if (state->output_edges[i].function && grad_outputs[i].defined()) {
        roots.push_back(state->output_edges[i]);
        root_grads.push_back(grad_outputs[i]);
      }
    }

    variable_list grads(state->num_inputs + state->num_params + 1);
    if (!roots.empty() && !state->targets.empty()) {
      variable_list captured = torch::autograd::Engine::get_default_engine().execute(
          roots, root_grads, keep_graph, create_graph, /*accumulate_grad=*/false, state->targets);
      for (const auto k : c10::irange(captured.size())) {
        grads[state->target_slot[k]] = std::move(captured[k]);
      }
    }
    if (!keep_graph) {
      // Free the segment's graph now rather than with the outer one.
      state->output_edges.clear();
      state->targets.clear();
    }
    return grads;
  }
};

// The modules' parameters, each as fn reads it: a parameter with a cast in this pass
// (weight_casts.h) through its cast only, so that its gradient reaches it once, through the cast.
TensorVector parameters_of(const std::vector<std::shared_ptr<torch::nn::Module>>& modules) {
  TensorVector params;
  std::unordered_set<const c10::TensorImpl*> seen;
  for (const auto& module : modules) {
    for (const auto& p : module->parameters(/*recurse=*/true)) {
      if (seen.insert(p.unsafeGetTensorImpl()).second) params.push_back(product_operand(p));
    }
  }
  return params;
}

}  // namespace

std::vector<Span> split_span(std::int64_t begin, std::int64_t end, std::int64_t pieces) {
  std::vector<Span> spans;
  const std::int64_t length = end - begin;
  if (length <= 0) return spans;
  const std::int64_t count = std::max<std::int64_t>(1, std::min(pieces, length));
  const std::int64_t base = length / count, longer = length % count;
  std::int64_t at = begin;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t size = base + (i < longer ? 1 : 0);
    spans.push_back({at, at + size});
    at += size;
  }
  return spans;
}

bool operator==(const Span& a, const Span& b) { return a.begin == b.begin && a.end == b.end; }

std::int64_t chunks_as_long_as(std::int64_t steps, std::int64_t reference_steps,
                               std::int64_t reference_chunks, std::int64_t most) {
  if (steps <= 0 || reference_steps <= 0 || reference_chunks <= 0) return most;
  const double reference_chunk_steps =
      static_cast<double>(reference_steps) / static_cast<double>(reference_chunks);
  const auto chunks =
      static_cast<std::int64_t>(std::llround(static_cast<double>(steps) / reference_chunk_steps));
  return std::clamp<std::int64_t>(chunks, 1, std::max<std::int64_t>(1, most));
}

TensorVector split_into_spans(const at::Tensor& t, int64_t dim, const std::vector<Span>& spans) {
  std::vector<int64_t> sizes;
  int64_t covered = 0;
  for (const auto& span : spans) {
    TORCH_CHECK(span.begin == covered, "split_into_spans: spans must tile the axis in order");
    sizes.push_back(span.length());
    covered = span.end;
  }
  TORCH_CHECK(covered == t.size(dim), "split_into_spans: spans cover ", covered, " of ",
              t.size(dim), " steps");
  if (spans.size() == 1) return {t};
  return t.split_with_sizes(sizes, dim);
}

TensorVector rechunk(const TensorVector& pieces, const std::vector<Span>& from,
                     const std::vector<Span>& to, int64_t dim) {
  if (from == to) return pieces;
  return split_into_spans(pieces.size() == 1 ? pieces.front() : at::cat(pieces, dim), dim, to);
}

SegmentMode segment_mode(bool checkpointed, bool same_partition) {
  if (checkpointed) return SegmentMode::kRecomputed;
  return same_partition ? SegmentMode::kKept : SegmentMode::kGraph;
}

TensorVector run_segment(SegmentFn fn, const TensorVector& given_inputs,
                         const std::vector<std::shared_ptr<torch::nn::Module>>& modules,
                         SegmentMode mode, const TensorVector& step_tensors) {
  TensorVector inputs = given_inputs;
  inputs.insert(inputs.end(), step_tensors.begin(), step_tensors.end());
  // A plain graph needs neither the parameter list nor an autograd node of its own.
  if (mode == SegmentMode::kGraph) return fn(inputs);
  TensorVector params = parameters_of(modules);
  const bool any_grad = std::any_of(inputs.begin(), inputs.end(), requires_grad) ||
                        std::any_of(params.begin(), params.end(), requires_grad);
  if (!torch::autograd::GradMode::is_enabled() || !any_grad) return fn(inputs);

  // A recompute in backward reads the pass's weight casts as the forward did.
  SegmentFn segment = std::move(fn);
  if (const auto& casts = ThreadSlot<WeightCasts>::current()) {
    segment = [inner = std::move(segment), casts](const TensorVector& in) {
      const WeightCastsScope installed(casts);
      return inner(in);
    };
  }
  // LibTorch 1.13's custom autograd functions cannot take an undefined tensor argument
  // (VariableInfo asks it for its device), so absent optional inputs (say, no static
  // context) are left out of the argument list and put back in place for fn.
  TensorVector present;
  if (std::all_of(inputs.begin(), inputs.end(), [](const at::Tensor& t) { return t.defined(); })) {
    present = inputs;
  } else {
    std::vector<std::size_t> slots;
    for (const auto i : c10::irange(inputs.size())) {
      if (!inputs[i].defined()) continue;
      slots.push_back(i);
      present.push_back(inputs[i]);
    }
    segment = [inner = std::move(segment), slots = std::move(slots),
               count = inputs.size()](const TensorVector& in) {
      TensorVector full(count);
      for (const auto k : c10::irange(slots.size())) full[slots[k]] = in[k];
      return inner(full);
    };
  }

  if (mode == SegmentMode::kRecomputed) {
    checkpoint::CheckpointOptions options;
    options.modules = modules;
    for (const auto& t : step_tensors) {
      TORCH_CHECK(t.defined(), "run_segment: a step tensor is undefined");
    }
    options.compressible_inputs = present.size() - step_tensors.size();  // they come last
    return checkpoint::checkpoint(std::move(segment), present, params, std::move(options));
  }
  return KeptSegmentFunction::apply(at::TensorList(present), at::TensorList(params), &segment);
}

TensorVector with_training_grad_mode(bool training, const std::function<TensorVector()>& fn) {
  const bool recording = torch::autograd::GradMode::is_enabled();
  TensorVector outputs;
  {
    const torch::autograd::AutoGradMode grad_on(recording || training);
    outputs = fn();
  }
  if (!recording) {
    for (auto& t : outputs) {
      if (t.defined()) t = t.detach();
    }
  }
  return outputs;
}

}  // namespace tft
