#include "checkpoint/recompute.h"

#include "checkpoint/boundary_compression.h"
#include "checkpoint/generators.h"
#include "common/torch_compat.h"
#include "memory/tracking_allocator.h"

#include <ATen/Context.h>
#include <ATen/core/ivalue.h>
#include <c10/util/ScopeExit.h>
#include <c10/util/irange.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <mutex>
#include <atomic>
#include <chrono>
#include <set>
#include <utility>

namespace tft::checkpoint {

// What a BoundaryDtypeScope installs: the dtype, and the copies its segments share.
struct BoundarySetting {
  BoundaryDtype dtype = BoundaryDtype::kFloat32;
  BoundaryCache cache;
};

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

thread_local int recompute_depth = 0;

// The clock of segments whose forward ran with none installed. Never destroyed: segments may
// finish their backward during static destruction.
const std::shared_ptr<RecomputeClock>& process_clock() {
  static const auto* clock =
      new std::shared_ptr<RecomputeClock>(std::make_shared<RecomputeClock>());
  return *clock;
}

// Marks this thread as recomputing for the lifetime of the scope (nesting allowed).
struct RecomputingScope {
  RecomputingScope() { ++recompute_depth; }
  ~RecomputingScope() { --recompute_depth; }
  RecomputingScope(const RecomputingScope&) = delete;
  RecomputingScope& operator=(const RecomputingScope&) = delete;
};

// The states of every generator the segment may draw from (generator_for: the installed set's,
// or LibTorch's defaults): the CPU generator always, and the generator of each CUDA device one
// of its tensors lives on. Reads and writes of a generator's state happen under that
// generator's mutex, as LibTorch requires.
class RngSnapshot {
 public:
  static RngSnapshot capture(const std::vector<c10::Device>& devices) {
    RngSnapshot snapshot;
    for (const auto& device : devices) {
      at::Generator generator = generator_for(device);
      std::lock_guard<std::mutex> lock(generator.mutex());
      snapshot.states_.emplace_back(generator, generator.get_state());
    }
    return snapshot;
  }

  void restore() const {
    for (const auto& [generator, state] : states_) {
      at::Generator g = generator;
      std::lock_guard<std::mutex> lock(g.mutex());
      g.set_state(state);
    }
  }

 private:
  std::vector<std::pair<at::Generator, at::Tensor>> states_;
};

// Train/eval flags of a set of modules and all their descendants, in pre-order so that
// restoring them in order (each train() call is recursive) leaves every flag as recorded.
class TrainingFlags {
 public:
  static TrainingFlags capture(const std::vector<std::shared_ptr<torch::nn::Module>>& roots) {
    TrainingFlags flags;
    for (const auto& root : roots) {
      for (const auto& module : root->modules(/*include_self=*/true)) {
        flags.flags_.emplace_back(module, module->is_training());
      }
    }
    return flags;
  }

  bool matches_current() const {
    for (const auto& [module, training] : flags_) {
      if (module->is_training() != training) return false;
    }
    return true;
  }

  void apply() const {
    for (const auto& [module, training] : flags_) module->train(training);
  }

 private:
  std::vector<std::pair<std::shared_ptr<torch::nn::Module>, bool>> flags_;
};

struct AutocastSnapshot {
  compat::AutocastState cpu = compat::get_autocast_state(c10::DeviceType::CPU);
  compat::AutocastState cuda = compat::get_autocast_state(c10::DeviceType::CUDA);
  // Whether autocast caches its casts of weights: a rerun must cast them as the forward did.
  bool cache = at::autocast::is_autocast_cache_enabled();

  void apply() const {
    compat::set_autocast_state(c10::DeviceType::CPU, cpu);
    compat::set_autocast_state(c10::DeviceType::CUDA, cuda);
    at::autocast::set_autocast_cache_enabled(cache);
  }
};

// How one input was kept when it was compressed: what save_for_backward would otherwise have
// recorded about it (its dtype, whether it needs a gradient, its version), and where its
// compressed tensors sit among the saved ones.
struct CompressedInput {
  std::size_t input = 0;    // index among the segment's inputs
  std::size_t payload = 0;  // index among the saved tensors; the scales (int8) follow it
  c10::ScalarType dtype = c10::ScalarType::Float;
  bool requires_grad = false;
  // Shares the input's counter without keeping its storage alive: an in-place change of the
  // input between forward and backward is caught as save_for_backward would catch it.
  c10::VariableVersion version;
  std::uint32_t saved_version = 0;
};

// Everything the backward pass needs besides the saved tensors. It lives in the autograd
// node (as a capsule in the context), so it is freed with the graph whether or not backward
// ever runs.
struct SegmentState : torch::CustomClassHolder {
  SegmentFn fn;
  CheckpointOptions options;
  size_t num_inputs = 0;
  TensorVector params;
  BoundaryDtype boundary = BoundaryDtype::kFloat32;
  // The installed scope's cache during the forward call only (null: none, or another dtype):
  // the node must not keep every other segment's copies alive.
  BoundaryCache* cache = nullptr;
  std::vector<CompressedInput> compressed;
  RngSnapshot rng;
  AutocastSnapshot autocast;
  TrainingFlags training;
  // What the forward's thread had installed, installed again for the recompute.
  std::shared_ptr<Generators> generators = current_generators();
  std::shared_ptr<RecomputeClock> clock = current_recompute_clock();
  std::shared_ptr<memory::CpuMemoryAccount> memory_account = memory::current_cpu_memory_account();
};

std::vector<c10::Device> generator_devices(const TensorVector& inputs, const TensorVector& params) {
  std::set<c10::DeviceIndex> cuda_devices;
  for (const auto* list : {&inputs, &params}) {
    for (const auto& t : *list) {
      if (t.defined() && t.is_cuda()) cuda_devices.insert(t.get_device());
    }
  }
  std::vector<c10::Device> devices{c10::Device(c10::DeviceType::CPU)};
  for (auto index : cuda_devices) devices.emplace_back(c10::DeviceType::CUDA, index);
  return devices;
}

// Restores a state for the lifetime of the scope, then puts back what was there before.
template <typename Snapshot>
class ScopedRestore {
 public:
  ScopedRestore(Snapshot saved, Snapshot current, bool active)
      : current_(std::move(current)), active_(active) {
    if (active_) saved.restore();
  }
  ~ScopedRestore() {
    if (active_) current_.restore();
  }
  ScopedRestore(const ScopedRestore&) = delete;
  ScopedRestore& operator=(const ScopedRestore&) = delete;

 private:
  Snapshot current_;
  bool active_;
};

class RecomputeFunction : public torch::autograd::Function<RecomputeFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, at::TensorList inputs, at::TensorList params,
                               c10::intrusive_ptr<SegmentState> state) {
    // Grad mode is off here (Function::apply turns it off), so fn records no graph.
    TensorVector input_vector(inputs.begin(), inputs.end());
    if (state->options.preserve_rng_state) {
      state->rng = RngSnapshot::capture(generator_devices(input_vector, state->params));
    }
    state->training = TrainingFlags::capture(state->options.modules);
    TensorVector outputs = state->fn(input_vector);

    // Inputs and parameters go through save_for_backward: it keeps them alive and lets
    // autograd detect an in-place change (say, an optimizer step) before backward. A
    // compressed input is saved as its compressed tensors, after the parameters, and an
    // undefined tensor in its own place.
    TensorVector to_save(inputs.begin(), inputs.end());
    to_save.insert(to_save.end(), params.begin(), params.end());
    for (const auto i : c10::irange(inputs.size())) {
      if (i >= state->options.compressible_inputs || !compresses(inputs[i], state->boundary)) {
        continue;
      }
      CompressedInput record;
      record.input = i;
      record.payload = to_save.size();
      record.dtype = inputs[i].scalar_type();
      record.requires_grad = inputs[i].requires_grad();
      record.version = inputs[i].unsafeGetTensorImpl()->version_counter();
      record.saved_version = record.version.current_version();
      CompressedTensor kept = state->cache != nullptr
                                  ? state->cache->compress(inputs[i], state->boundary)
                                  : compress(inputs[i], state->boundary);
      to_save.push_back(std::move(kept.payload));
      if (kept.scales.defined()) to_save.push_back(std::move(kept.scales));
      to_save[i] = at::Tensor();
      state->compressed.push_back(std::move(record));
    }
    state->cache = nullptr;
    ctx->save_for_backward(to_save);
    ctx->saved_data["segment"] = c10::IValue::make_capsule(state);
    ctx->set_materialize_grads(false);

    TensorVector non_differentiable;
    for (const auto& out : outputs) {
      if (out.defined() && !at::isFloatingType(out.scalar_type()) &&
          !at::isComplexType(out.scalar_type())) {
        non_differentiable.push_back(out);
      }
    }
    if (!non_differentiable.empty()) ctx->mark_non_differentiable(non_differentiable);
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    // Grad mode on entry is the caller's create_graph.
    const bool create_graph = torch::autograd::GradMode::is_enabled();
    // Throws "Trying to backward through the graph a second time" once the buffers are freed.
    const variable_list saved = ctx->get_saved_variables();
    auto state =
        c10::static_intrusive_pointer_cast<SegmentState>(ctx->saved_data.at("segment").toCapsule());

    TensorVector inputs;
    inputs.reserve(state->num_inputs);
    TORCH_CHECK(state->compressed.empty() || !create_graph,
                "tft::checkpoint: higher-order gradients (create_graph) need float32 "
                "boundaries; this segment kept its inputs as ",
                boundary_dtype_name(state->boundary));
    std::vector<const CompressedInput*> compressed_at(state->num_inputs, nullptr);
    for (const auto& record : state->compressed) compressed_at[record.input] = &record;
    for (const auto i : c10::irange(state->num_inputs)) {
      if (const CompressedInput* record = compressed_at[i]) {
        TORCH_CHECK(record->version.current_version() == record->saved_version,
                    "one of the variables needed for gradient computation has been modified "
                    "by an inplace operation: input ",
                    i, " of a checkpointed segment (kept as ", boundary_dtype_name(state->boundary),
                    ") is at version ", record->version.current_version(), "; expected version ",
                    record->saved_version, " instead.");
        CompressedTensor kept;
        kept.payload = saved[record->payload];
        if (state->boundary == BoundaryDtype::kInt8) kept.scales = saved[record->payload + 1];
        at::Tensor leaf = decompress(kept, record->dtype);
        leaf.requires_grad_(record->requires_grad);
        inputs.push_back(std::move(leaf));
        continue;
      }
      const auto& saved_input = saved[i];
      if (!saved_input.defined()) {
        inputs.emplace_back();
        continue;
      }
      if (create_graph) {
        // Higher-order gradients: the recomputed graph must hang off the original inputs so
        // that the gradients returned here can be differentiated again.
        inputs.push_back(saved_input);
        continue;
      }
      // A fresh leaf per input, so the recomputed graph ends here.
      at::Tensor leaf = saved_input.detach();
      leaf.requires_grad_(saved_input.requires_grad());
      inputs.push_back(std::move(leaf));
    }

    TensorVector outputs;
    {
      // The forward thread's generators, clock and memory account (this may be another
      // thread: the autograd engine runs a CUDA backward on its own device threads).
      const GeneratorsScope generators(state->generators);
      const RecomputeClockScope clock(state->clock);
      const memory::CpuMemoryAccountScope memory_account(state->memory_account);
      // Put the forward's RNG, autocast and train/eval state in place for the rerun, and the
      // current ones back afterwards (also when fn throws).
      const bool rng = state->options.preserve_rng_state;
      ScopedRestore<RngSnapshot> rng_scope(
          state->rng,
          rng ? RngSnapshot::capture(generator_devices(inputs, state->params)) : RngSnapshot(),
          rng);
      const AutocastSnapshot autocast_now;
      const TrainingFlags training_now = TrainingFlags::capture(state->options.modules);
      const bool switch_modes = !state->training.matches_current();
      state->autocast.apply();
      if (switch_modes) state->training.apply();
      const auto restore_modes = c10::make_scope_exit([&] {
        autocast_now.apply();
        if (switch_modes) training_now.apply();
      });

      const bool outermost = recompute_depth == 0;
      const auto started = std::chrono::steady_clock::now();
      RecomputingScope recomputing;
      torch::autograd::AutoGradMode grad_on(true);
      outputs = state->fn(inputs);
      if (outermost) {  // nested reruns are part of their enclosing one's time
        state->clock->add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - started)
                              .count());
      }
    }

    TORCH_CHECK(outputs.size() == grad_outputs.size(),
                "tft::checkpoint: the recomputed segment returned ", outputs.size(),
                " outputs, the original forward ", grad_outputs.size(),
                "; a checkpointed function must be deterministic in its structure");

    TensorVector differentiated, output_grads;
    for (const auto i : c10::irange(outputs.size())) {
      if (outputs[i].defined() && outputs[i].requires_grad() && grad_outputs[i].defined()) {
        differentiated.push_back(outputs[i]);
        output_grads.push_back(grad_outputs[i]);
      }
    }

    // Targets: inputs that require grad, then parameters that do. Remember where each goes.
    TensorVector targets;
    std::vector<size_t> target_slot;  // index into the gradient list returned below
    for (const auto i : c10::irange(inputs.size())) {
      if (inputs[i].defined() && inputs[i].requires_grad()) {
        targets.push_back(inputs[i]);
        target_slot.push_back(i);
      }
    }
    for (const auto i : c10::irange(state->params.size())) {
      const auto& p = state->params[i];
      if (p.defined() && p.requires_grad()) {
        targets.push_back(p);
        target_slot.push_back(state->num_inputs + i);
      }
    }

    // One gradient per tensor argument (inputs, then params) plus one for the state.
    variable_list grads(state->num_inputs + state->params.size() + 1);
    if (differentiated.empty() || targets.empty()) return grads;

    TensorVector target_grads = torch::autograd::grad(differentiated, targets, output_grads,
                                                      /*retain_graph=*/create_graph, create_graph,
                                                      /*allow_unused=*/true);
    for (const auto k : c10::irange(targets.size())) grads[target_slot[k]] = target_grads[k];
    return grads;
  }
};

}  // namespace

TensorVector checkpoint(SegmentFn fn, const TensorVector& inputs, const TensorVector& params,
                        CheckpointOptions options) {
  TORCH_CHECK(fn, "tft::checkpoint: the segment function is empty");
  const auto requires_grad = [](const at::Tensor& t) { return t.defined() && t.requires_grad(); };
  const bool any_grad = std::any_of(inputs.begin(), inputs.end(), requires_grad) ||
                        std::any_of(params.begin(), params.end(), requires_grad);
  if (!torch::autograd::GradMode::is_enabled() || !any_grad) {
    // Nothing to differentiate: no graph would be kept anyway.
    return fn(inputs);
  }

  auto state = c10::make_intrusive<SegmentState>();
  state->fn = std::move(fn);
  state->options = std::move(options);
  state->num_inputs = inputs.size();
  state->params = params;
  const auto& installed = ThreadSlot<BoundarySetting>::current();
  state->boundary =
      state->options.boundary.value_or(installed ? installed->dtype : BoundaryDtype::kFloat32);
  if (installed && installed->dtype == state->boundary) state->cache = &installed->cache;
  return RecomputeFunction::apply(at::TensorList(inputs), at::TensorList(params), state);
}

TensorVector checkpoint_module(const std::shared_ptr<torch::nn::Module>& module, SegmentFn fn,
                               const TensorVector& inputs) {
  TORCH_CHECK(module, "tft::checkpoint_module: module is null");
  CheckpointOptions options;
  options.modules.push_back(module);
  return checkpoint(std::move(fn), inputs, module->parameters(/*recurse=*/true),
                    std::move(options));
}

bool is_recomputing() { return recompute_depth > 0; }

BoundaryDtypeScope::BoundaryDtypeScope(BoundaryDtype dtype)
    : scope_(std::make_shared<BoundarySetting>(BoundarySetting{dtype, {}})) {}

BoundaryDtype current_boundary_dtype() {
  const auto& installed = ThreadSlot<BoundarySetting>::current();
  return installed ? installed->dtype : BoundaryDtype::kFloat32;
}

std::shared_ptr<RecomputeClock> current_recompute_clock() {
  const auto& installed = ThreadSlot<RecomputeClock>::current();
  return installed ? installed : process_clock();
}

std::int64_t recompute_nanoseconds() { return current_recompute_clock()->nanoseconds(); }

}  // namespace tft::checkpoint
