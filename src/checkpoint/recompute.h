// Gradient (activation) checkpointing for LibTorch's C++ frontend, which has none of its own
// (PyTorch issue #52744).
//
// tft::checkpoint::checkpoint(fn, inputs, params) runs `fn` without recording an autograd
// graph, so none of its intermediate activations are kept: only `inputs` are saved. During
// backward the segment is run again with grad enabled and differentiated in place. The rerun
// sees the same RNG state (dropout masks match), autocast state and train/eval flags as the
// original forward, so gradients are bitwise equal to the same segment run un-checkpointed
// (model/segment.h: SegmentMode::kKept; a plain graph sums them in another order). It also runs
// with the forward thread's generators (checkpoint/generators.h), recompute clock and CPU
// memory account installed, so a backward on another thread draws from and charges the same
// trainer.
//
// Rules a caller must know:
//  * Parameters used by `fn` must be passed in `params`: LibTorch only records the segment
//    when a *tensor argument* requires grad, and only arguments receive gradients. A closure
//    that captures a module's parameters is otherwise invisible to autograd.
//  * `fn` must be a pure function of its inputs, its parameters and the RNG: it runs twice.
//    Layers with state that must not update twice (running statistics, QAT observers) check
//    is_recomputing() and skip the update during the rerun.
//  * An operator that picks its kernel by grad mode (LibTorch 2.x's oneDNN LSTM) gives other
//    bits in the graph-free first run than in the recompute: run it with grad on in every
//    training pass (tft::with_training_grad_mode, model/segment.h).
//  * Outputs that are not floating point are returned as non-differentiable.
//  * Higher-order gradients work: with create_graph the recompute records its own graph.
//  * A second backward through the same segment without retain_graph raises an error
//    (c10::Error), it never crashes.
//  * With a compressed boundary (CheckpointOptions::boundary, boundary_dtype.h) the inputs that
//    require grad are kept as bfloat16 or int8 copies and the recompute starts from their
//    decompressed values: gradients are then close to, not bitwise equal to, an
//    un-checkpointed run's. An in-place change of such an input before backward is still an
//    error (its version counter is checked, as save_for_backward would), and higher-order
//    gradients (create_graph) need float32 boundaries.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "checkpoint/boundary_dtype.h"
#include "common/thread_slot.h"

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}

namespace tft::checkpoint {

using TensorVector = std::vector<at::Tensor>;

// The segment to checkpoint: from its input tensors to its output tensors.
using SegmentFn = std::function<TensorVector(const TensorVector& inputs)>;

struct CheckpointOptions {
  // Modules run by the segment. Their train/eval flags (and their sub-modules') at forward
  // time are restored for the recompute, in case the caller switches modes in between.
  std::vector<std::shared_ptr<torch::nn::Module>> modules;
  // Save and restore the RNG state around the recompute so that dropout draws the same masks.
  // Only a segment that draws no random numbers may turn this off (it saves a state copy).
  bool preserve_rng_state = true;
  // How the inputs are kept until backward; nothing: the dtype installed on the calling thread
  // (BoundaryDtypeScope), float32 when none is.
  std::optional<BoundaryDtype> boundary;
  // How many of the leading inputs a compressed boundary may compress; the others are kept
  // exactly, as parameters are (say, parameters stacked once per step and handed to every
  // chunk as inputs: rounding them would change the function, not just its input).
  std::size_t compressible_inputs = SIZE_MAX;
};

struct BoundarySetting;  // recompute.cpp

// Installs `dtype` as the boundary dtype of the segments checkpointed on this thread whose
// options name none, for the scope's lifetime: how a model hands its configured dtype to every
// segment it runs without passing it through each call. Segments inside one scope share the
// compressed copy of a tensor they all keep (BoundaryCache, boundary_compression.h): open one
// scope per forward pass.
class BoundaryDtypeScope {
 public:
  explicit BoundaryDtypeScope(BoundaryDtype dtype);

 private:
  ThreadSlot<BoundarySetting>::Scope scope_;
};

// The dtype installed on this thread (float32 when none is).
BoundaryDtype current_boundary_dtype();

// Runs `fn(inputs)` keeping no activations, to be recomputed in backward. `params` are the
// tensors `fn` reads besides its inputs that need gradients (usually module parameters).
// Without grad mode, or when no input or parameter requires grad, this is just fn(inputs).
// Undefined tensors may appear among the inputs (optional arguments).
TensorVector checkpoint(SegmentFn fn, const TensorVector& inputs, const TensorVector& params,
                        CheckpointOptions options = {});

// checkpoint() with the parameters and train/eval flags taken from `module`.
TensorVector checkpoint_module(const std::shared_ptr<torch::nn::Module>& module, SegmentFn fn,
                               const TensorVector& inputs);

// True while this thread is recomputing a checkpointed segment during backward.
bool is_recomputing();

// Accumulates the wall time of checkpointed segments' reruns in backward (the forward reruns
// only; nested segments count once). The difference across a step is that step's recompute
// cost: what the budget planner charges a unit. A segment charges the clock installed on the
// thread that ran its forward (RecomputeClockScope), whichever thread runs its backward; with
// none installed, a process-wide clock that every such segment shares.
class RecomputeClock {
 public:
  std::int64_t nanoseconds() const { return nanoseconds_.load(); }
  void add(std::int64_t nanoseconds) { nanoseconds_ += nanoseconds; }

 private:
  std::atomic<std::int64_t> nanoseconds_{0};
};

// Installs `clock` (null: the process-wide one) on this thread for the scope's lifetime.
using RecomputeClockScope = ThreadSlot<RecomputeClock>::Scope;

// The clock installed on this thread (the process-wide one when none is).
std::shared_ptr<RecomputeClock> current_recompute_clock();

// current_recompute_clock()'s total so far.
std::int64_t recompute_nanoseconds();

}  // namespace tft::checkpoint
