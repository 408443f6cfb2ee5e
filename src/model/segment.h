// How the TFT's units run their work: a unit that recomputes in backward (gradient
// checkpointing) runs in time chunks, each chunk one autograd segment that keeps only its
// inputs; a unit that recomputes nothing runs whole, as one plain autograd graph.
//
// Why a checkpointed segment's gradients differ in the last bits from a plain graph's: it
// hands autograd the sum of the gradients of each of its inputs and parameters over all uses
// inside the segment, where a plain graph adds every single use into one running sum (LibTorch's
// CPU LSTM, for one, uses its hidden-to-hidden weight once per time step). Floating-point
// addition is not associative, so the two orders differ. Where bitwise equality across
// strategies matters (the parity tests, tft-bench --bitwise), checkpoint.chunk_every_unit runs
// every unit in its chunks and wraps each un-checkpointed chunk in an autograd function of the
// checkpointing one's shape (SegmentMode::kKept), which keeps the segment's own graph and
// differentiates it in backward: the same kernels on the same shapes, and the same summation
// order, whether or not the segment is checkpointed. That costs operator calls (each a kernel
// launch on a GPU), so it is not the default.
#pragma once

#include "checkpoint/recompute.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}

namespace tft {

// A half-open range [begin, end) of time steps (or batch rows).
struct Span {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t length() const { return end - begin; }
};

// Splits [begin, end) into min(pieces, end - begin) contiguous spans whose lengths differ by
// at most one (longer spans first). An empty range gives no spans.
std::vector<Span> split_span(std::int64_t begin, std::int64_t end, std::int64_t pieces);

bool operator==(const Span& a, const Span& b);

// How many chunks cut `steps` into pieces about as long as those of `reference_steps` cut into
// `reference_chunks`: round(steps / (reference_steps / reference_chunks)), from 1 to `most`.
// A chunk shorter than the largest one lowers no peak (a checkpointed backward holds the
// largest one recomputed) and costs operator calls. `most` when there is no reference.
std::int64_t chunks_as_long_as(std::int64_t steps, std::int64_t reference_steps,
                               std::int64_t reference_chunks, std::int64_t most);

// Views of `t` along `dim`, one per span; the spans must tile [0, t.size(dim)) in order. All
// pieces come from one autograd node whose backward concatenates their gradients once
// (slicing each piece separately would scatter every piece's gradient into a zero tensor of
// the full size and add those up: chunks x full-size work and memory).
checkpoint::TensorVector split_into_spans(const at::Tensor& t, int64_t dim,
                                          const std::vector<Span>& spans);

// Pieces laid out along `from`, re-cut along `to` (both tiling the same range): the pieces
// themselves when the spans agree, else one concatenation and one split.
checkpoint::TensorVector rechunk(const checkpoint::TensorVector& pieces,
                                 const std::vector<Span>& from, const std::vector<Span>& to,
                                 int64_t dim);

// How a segment keeps what its backward needs.
enum class SegmentMode {
  kGraph,       // fn's own autograd graph, nothing around it: the fewest operator calls
  kKept,        // the graph kept inside one autograd node shaped like kRecomputed's (bitwise
                // parity with a checkpointed segment; see the top of this file)
  kRecomputed,  // only the inputs kept, fn rerun in backward (tft::checkpoint::checkpoint)
};

// kRecomputed when `checkpointed`, else kKept when `same_partition`, else kGraph.
SegmentMode segment_mode(bool checkpointed, bool same_partition);

// Runs `fn(inputs)` as one segment. `modules` are the modules `fn` runs: their parameters are
// the segment's parameters (deduplicated) and their train/eval flags are restored for a
// recompute. Without grad mode, or when nothing requires grad, this is fn(inputs) in every mode.
//
// `step_tensors` are tensors made from the modules' parameters once per step for all the
// unit's chunks (stacked weights, say): fn finds them after its inputs, the segment's gradient
// reaches them like an input's, and a compressed boundary keeps them exact, as it keeps
// parameters.
checkpoint::TensorVector run_segment(checkpoint::SegmentFn fn,
                                     const checkpoint::TensorVector& inputs,
                                     const std::vector<std::shared_ptr<torch::nn::Module>>& modules,
                                     SegmentMode mode,
                                     const checkpoint::TensorVector& step_tensors = {});

// Runs `fn` with grad mode on whenever `training` is, and returns its outputs detached when
// grad mode was off on entry. For operators that pick their kernel by grad mode: LibTorch 2.x's
// oneDNN LSTM takes its training or its inference kernel by it, so a checkpointed segment's
// graph-free first pass and its recompute would otherwise give different bits. The first
// pass's graph is dropped as this returns. (This replaces switching oneDNN off around every
// segment: a process-wide switch that concurrent trainers could leave in the wrong state.)
checkpoint::TensorVector with_training_grad_mode(
    bool training, const std::function<checkpoint::TensorVector()>& fn);

}  // namespace tft
