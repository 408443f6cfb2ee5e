// FLOPs of a stretch of work, counted from the operators ATen actually runs (RecordFunction
// callbacks on every thread), the way torch.utils.flop_counter counts them: matrix products at
// 2*m*n*k, nothing for element-wise work. The LSTM is counted apart from the other products.
//
// Only products are counted (aten::mm, addmm, bmm, baddbmm, their in-place forms, convolution),
// not the composite ops that dispatch to them (aten::linear, aten::matmul), and a product only
// when no counted op encloses it on its thread: autocast's kernels call their op a second time
// in the reduced dtype, and the CPU's baddbmm may run an aten::addmm_ per batch entry. The LSTM's
// fused kernels (mkldnn_rnn_layer on the CPU, cuDNN's _cudnn_rnn on CUDA, the fused cells) are
// counted by shape: 2*4*H*(I+H) per layer, time step and sample forward, twice that backward.
// Products that the CPU's unfused LSTM runs inside aten::lstm (forward) count as LSTM flops too;
// its backward products cannot be told apart from the others' and count as GEMM flops (none of the
// fused kernels has that problem).
//
// The callback is global (on CUDA the autograd engine runs backward, and with it every
// checkpoint's recompute, on its own device thread) and exists only while a FlopCounter lives:
// count one step at a time, never a timed one.
#pragma once

#include <ATen/record_function.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace tft::bench {

struct FlopCount {
  double gemm = 0;  // matrix products outside the LSTM
  double lstm = 0;  // the LSTM's products, forward and backward
  double total() const { return gemm + lstm; }
};

struct OpTally {
  std::int64_t calls = 0;
  double flops = 0;  // 0 for an op that is not counted
};

class FlopCounter {
 public:
  // Starts counting; at most one counter at a time (std::logic_error otherwise).
  // `record_all_ops`: also tally the calls of every other operator seen (for op_tallies()).
  explicit FlopCounter(bool record_all_ops = false);
  ~FlopCounter();  // stops counting
  FlopCounter(const FlopCounter&) = delete;
  FlopCounter& operator=(const FlopCounter&) = delete;

  // std::runtime_error when some counted operator's inputs could not be read (a build without
  // NDEBUG against a release LibTorch): a short count is never returned.
  FlopCount count() const;
  // Calls and flops per operator name ("aten::addmm"; "aten::mm [lstm]" for products counted
  // as the LSTM's): the counted ones, and every other one seen when record_all_ops.
  std::map<std::string, OpTally> op_tallies() const;

  // The flops of one call of `name` with the inputs' sizes, and whether it belongs to the LSTM
  // (0 for an operator not counted). Exposed for the callback.
  struct OpFlops {
    double flops = 0;
    bool lstm = false;
    bool counted = false;
    bool nested = false;  // a counted operator inside another: not counted again
  };
  static OpFlops flops_of(const at::RecordFunction& fn);

  void add(const char* name, const OpFlops& op);
  void add_unreadable();

 private:
  at::CallbackHandle handle_ = 0;
  bool record_all_ops_ = false;
  mutable std::mutex mutex_;
  FlopCount count_;
  std::map<std::string, OpTally> tallies_;
  std::int64_t unreadable_ = 0;
};

}  // namespace tft::bench
