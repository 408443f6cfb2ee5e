#include "flop_counter.h"

#include <atomic>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tft::bench {
namespace {

std::atomic<FlopCounter*> active_counter{nullptr};

// LSTM attribution of products that are not LSTM kernels themselves (the unfused CPU LSTM):
// the forward ones run inside aten::lstm on the same thread; the backward ones inside the
// autograd node of such a forward op, recognised by (forward thread, sequence number).
thread_local int lstm_depth = 0;
// Counted operators enclosing the current one on this thread: an operator inside another is
// not counted again. Autocast's kernels call their operator a second time (aten::bmm inside
// aten::bmm, in bfloat16), and the CPU's baddbmm may run one aten::addmm_ per batch entry.
thread_local int counted_depth = 0;
thread_local std::vector<bool> backward_in_lstm;  // one entry per autograd node being run
std::mutex lstm_nodes_mutex;
std::set<std::pair<std::uint64_t, std::int64_t>> lstm_nodes;  // guarded by lstm_nodes_mutex

bool is(const char* name, const char* wanted) { return std::strcmp(name, wanted) == 0; }

// The operators whose flops are counted (flops_of has a formula for each).
bool is_counted(const char* name) {
  if (std::strncmp(name, "aten::", 6) != 0) return false;
  const char* n = name + 6;
  for (const char* counted :
       {"mm", "addmm", "addmm_", "bmm", "baddbmm", "baddbmm_", "convolution", "mkldnn_rnn_layer",
        "mkldnn_rnn_layer_backward", "_cudnn_rnn", "_cudnn_rnn_backward"}) {
    if (is(n, counted)) return true;
  }
  return false;
}

// The sizes of tensor input `i`, or nothing when there is none.
c10::IntArrayRef sizes(const at::RecordFunction& fn, std::size_t i) {
  const auto inputs = fn.inputs();
  if (i >= inputs.size() || !inputs[i].isTensor()) return {};
  const at::Tensor& t = inputs[i].toTensor();
  return t.defined() ? t.sizes() : c10::IntArrayRef{};
}

std::int64_t int_input(const at::RecordFunction& fn, std::size_t i, std::int64_t fallback) {
  const auto inputs = fn.inputs();
  return i < inputs.size() && inputs[i].isInt() ? inputs[i].toInt() : fallback;
}

bool bool_input(const at::RecordFunction& fn, std::size_t i) {
  const auto inputs = fn.inputs();
  return i < inputs.size() && inputs[i].isBool() && inputs[i].toBool();
}

double numel(c10::IntArrayRef s) {
  double n = 1;
  for (const auto d : s) n *= static_cast<double>(d);
  return n;
}

// [.., m, k] x [.., k, n] (batched or not): 2*batch*m*n*k.
double product_flops(c10::IntArrayRef a, c10::IntArrayRef b) {
  if (a.size() < 2 || b.size() < 2) return 0;
  return 2 * numel(a) * static_cast<double>(b[b.size() - 1]);
}

// One LSTM layer's forward over `input` ([T, B, I] or [B, T, I]): 2*4*H*(I+H) per time step
// and sample.
double lstm_layer_flops(c10::IntArrayRef input, std::int64_t hidden) {
  if (input.empty() || hidden <= 0) return 0;
  const double in_size = static_cast<double>(input.back());
  const double steps_times_batch = numel(input) / in_size;
  return 2.0 * 4 * static_cast<double>(hidden) * (in_size + static_cast<double>(hidden)) *
         steps_times_batch;
}

// A whole (unidirectional) multi-layer LSTM: the first layer reads the input, the others H.
double lstm_flops(c10::IntArrayRef input, std::int64_t hidden, std::int64_t layers) {
  if (input.empty() || hidden <= 0) return 0;
  const double steps_times_batch = numel(input) / static_cast<double>(input.back());
  const double later = 2.0 * 4 * static_cast<double>(hidden) * 2 * static_cast<double>(hidden) *
                       steps_times_batch *
                       static_cast<double>(std::max<std::int64_t>(layers - 1, 0));
  return lstm_layer_flops(input, hidden) + later;
}

// 2 * (output positions) * (weight elements); `input` and `weight` as aten::convolution's.
double convolution_flops(const at::RecordFunction& fn) {
  const c10::IntArrayRef input = sizes(fn, 0), weight = sizes(fn, 1);
  if (input.size() < 3 || weight.size() != input.size()) return 0;
  if (bool_input(fn, 6)) {  // transposed: one product per input position
    return 2 * numel(input) / static_cast<double>(input[1]) * numel(weight);
  }
  const auto inputs = fn.inputs();
  const auto list = [&](std::size_t i) {
    return i < inputs.size() && inputs[i].isIntList() ? inputs[i].toIntVector()
                                                      : std::vector<std::int64_t>{};
  };
  const auto stride = list(3), padding = list(4), dilation = list(5);
  double positions = static_cast<double>(input[0]);
  for (std::size_t d = 2; d < input.size(); ++d) {
    const std::size_t j = d - 2;
    const auto at = [&](const std::vector<std::int64_t>& v, std::int64_t fallback) {
      return v.empty() ? fallback : v[std::min(j, v.size() - 1)];
    };
    const std::int64_t out =
        (input[d] + 2 * at(padding, 0) - at(dilation, 1) * (weight[d] - 1) - 1) / at(stride, 1) + 1;
    positions *= static_cast<double>(out);
  }
  return 2 * positions * numel(weight);
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  FlopCounter* counter = active_counter.load();
  if (counter == nullptr) return nullptr;
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    const std::lock_guard lock(lstm_nodes_mutex);
    backward_in_lstm.push_back(lstm_nodes.count({fn.forwardThreadId(), fn.seqNr()}) > 0);
    return nullptr;
  }
  const char* name = fn.name();
  const bool lstm_op = is(name, "aten::lstm");
  if (lstm_op) ++lstm_depth;
  const bool in_lstm = lstm_depth > 0 || (!backward_in_lstm.empty() && backward_in_lstm.back());
  if (lstm_depth > 0 && fn.seqNr() >= 0) {
    const std::lock_guard lock(lstm_nodes_mutex);
    lstm_nodes.insert({fn.threadId(), fn.seqNr()});
  }
  if (!is_counted(name)) {
    counter->add(name, {});
    return nullptr;
  }
  if (counted_depth++ > 0) {
    counter->add(name, {0, false, false, /*nested=*/true});
    return nullptr;
  }
  try {
    FlopCounter::OpFlops op = FlopCounter::flops_of(fn);
    op.lstm = op.lstm || (op.counted && in_lstm);
    counter->add(name, op);
  } catch (const std::exception&) {
    // RecordFunction::inputs() asserts, in a build without NDEBUG, a flag that only a LibTorch
    // built without NDEBUG sets; RecordFunction would swallow the error and the count would
    // come out short without a word.
    counter->add_unreadable();
  }
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* /*context*/) {
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    if (!backward_in_lstm.empty()) backward_in_lstm.pop_back();
    return;
  }
  const char* name = fn.name();
  if (counted_depth > 0 && is_counted(name)) --counted_depth;
  if (lstm_depth > 0 && is(name, "aten::lstm")) --lstm_depth;
}

}  // namespace

FlopCounter::OpFlops FlopCounter::flops_of(const at::RecordFunction& fn) {
  const char* name = fn.name();
  OpFlops op;
  if (std::strncmp(name, "aten::", 6) != 0) return op;
  const char* n = name + 6;
  if (is(n, "mm") || is(n, "bmm")) {
    op = {product_flops(sizes(fn, 0), sizes(fn, 1)), false, true};
  } else if (is(n, "addmm") || is(n, "addmm_") || is(n, "baddbmm") || is(n, "baddbmm_")) {
    op = {product_flops(sizes(fn, 1), sizes(fn, 2)), false, true};
  } else if (is(n, "convolution")) {
    op = {convolution_flops(fn), false, true};
  } else if (is(n, "mkldnn_rnn_layer")) {
    // (input, w_ih [4H, I], w_hh [4H, H], biases, hx, cx, reverse, batch_sizes, mode, hidden..)
    const c10::IntArrayRef w_hh = sizes(fn, 2);
    op = {lstm_layer_flops(sizes(fn, 0), w_hh.size() == 2 ? w_hh[1] : 0), true, true};
  } else if (is(n, "mkldnn_rnn_layer_backward")) {
    // (input, w_ih, w_hh, biases, hx, cx, output, ...): the input and weight gradients, 2x.
    const c10::IntArrayRef w_hh = sizes(fn, 2);
    op = {2 * lstm_layer_flops(sizes(fn, 0), w_hh.size() == 2 ? w_hh[1] : 0), true, true};
  } else if (is(n, "_cudnn_rnn")) {
    // (input, weights, weight_stride0, weight_buf, hx, cx, mode, hidden_size, proj_size,
    //  num_layers, ...); the TFT's LSTMs are unidirectional.
    op = {lstm_flops(sizes(fn, 0), int_input(fn, 7, 0), int_input(fn, 9, 1)), true, true};
  } else if (is(n, "_cudnn_rnn_backward")) {
    // (input, weights, weight_stride0, weight_buf, hx, cx, output, grad_output, grad_hy,
    //  grad_cy, mode, hidden_size, proj_size, num_layers, ...)
    op = {2 * lstm_flops(sizes(fn, 0), int_input(fn, 11, 0), int_input(fn, 13, 1)), true, true};
  }
  return op;
}

FlopCounter::FlopCounter(bool record_all_ops) : record_all_ops_(record_all_ops) {
  FlopCounter* expected = nullptr;
  if (!active_counter.compare_exchange_strong(expected, this)) {
    throw std::logic_error("FlopCounter: another counter is active");
  }
  {
    const std::lock_guard lock(lstm_nodes_mutex);
    lstm_nodes.clear();
  }
  handle_ = at::addGlobalCallback(
      at::RecordFunctionCallback(on_start, on_end)
          .needsInputs(true)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

FlopCounter::~FlopCounter() {
  at::removeCallback(handle_);
  active_counter.store(nullptr);
  const std::lock_guard lock(lstm_nodes_mutex);
  lstm_nodes.clear();
}

void FlopCounter::add(const char* name, const OpFlops& op) {
  if (!op.counted && !record_all_ops_) return;
  const std::lock_guard lock(mutex_);
  (op.lstm ? count_.lstm : count_.gemm) += op.flops;
  std::string key = name;
  if (op.lstm) key += " [lstm]";
  if (op.nested) key += " [inside a counted op]";
  OpTally& tally = tallies_[key];
  ++tally.calls;
  tally.flops += op.flops;
}

void FlopCounter::add_unreadable() {
  const std::lock_guard lock(mutex_);
  ++unreadable_;
}

FlopCount FlopCounter::count() const {
  const std::lock_guard lock(mutex_);
  if (unreadable_ > 0) {
    throw std::runtime_error(
        "FLOP counting failed: the inputs of " + std::to_string(unreadable_) +
        " counted operator calls could not be read (RecordFunction::inputs() asserts in a build "
        "without NDEBUG against a release LibTorch; build tft-bench with -DNDEBUG, as the "
        "default RelWithDebInfo does)");
  }
  return count_;
}

std::map<std::string, OpTally> FlopCounter::op_tallies() const {
  const std::lock_guard lock(mutex_);
  return tallies_;
}

}  // namespace tft::bench
