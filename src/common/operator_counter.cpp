#include "common/operator_counter.h"

#include <ATen/Context.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace tft {
namespace {

std::atomic<OperatorCounter*> active_counter{nullptr};

bool is(const char* name, const char* expected) { return std::strcmp(name, expected) == 0; }

// A copy whose destination is on the CPU and whose source is not: copy_(self, src).
bool copies_to_host(const at::RecordFunction& fn) {
  try {
    const auto inputs = fn.inputs();
    if (inputs.size() < 2 || !inputs[0].isTensor() || !inputs[1].isTensor()) return false;
    return inputs[0].toTensor().device().is_cpu() && !inputs[1].toTensor().device().is_cpu();
  } catch (const std::exception&) {
    // Inputs unreadable (RecordFunction::inputs() asserts in a build without NDEBUG against a
    // release LibTorch): count the copy as a sync rather than hide one.
    return true;
  }
}

bool on_device(const at::RecordFunction& fn) {
  try {
    const auto inputs = fn.inputs();
    return !inputs.empty() && inputs[0].isTensor() && !inputs[0].toTensor().device().is_cpu();
  } catch (const std::exception&) {
    return true;  // unreadable: count it rather than hide one
  }
}

// The ATen operators running on this thread, outermost first.
thread_local std::vector<const char*> open_operators;

// Whether only `aten::item` (or nothing) encloses the current operator: a read of a value that
// the caller asked for, not one inside a kernel (the CPU's fused Adam reads each step count
// with item(), where the CUDA kernel reads it on the device).
bool called_by_the_host() {
  for (const char* name : open_operators) {
    if (!is(name, "aten::item")) return false;
  }
  return true;
}

bool is_sync(const at::RecordFunction& fn, bool devices_present) {
  const char* name = fn.name();
  // .item() and every other read of one value end here.
  if (is(name, "aten::_local_scalar_dense")) {
    return called_by_the_host() || (devices_present && on_device(fn));
  }
  if (!devices_present) return false;  // on the CPU alone nothing else waits for a device
  if (is(name, "aten::copy_")) return copies_to_host(fn);
  if (is(name, "aten::nonzero")) return on_device(fn);  // its output's size is data-dependent
  return false;
}

// Whether an accelerator is present: only then are inputs read (to tell a device-to-host copy
// from a copy on the CPU), which costs every operator call a little more.
bool accelerator_present() { return at::hasCUDA(); }

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  OperatorCounter* counter = active_counter.load();
  if (counter == nullptr) return nullptr;
  const char* name = fn.name();
  if (std::strncmp(name, "aten::", 6) != 0) return nullptr;
  static const bool devices = accelerator_present();
  counter->record(name, is_sync(fn, devices));
  open_operators.push_back(name);
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* /*context*/) {
  if (active_counter.load() == nullptr || std::strncmp(fn.name(), "aten::", 6) != 0) return;
  // An operator that began before the counter did ends with nothing of its own open.
  if (!open_operators.empty()) open_operators.pop_back();
}

}  // namespace

OperatorCounts& OperatorCounts::operator+=(const OperatorCounts& other) {
  calls += other.calls;
  syncs += other.syncs;
  return *this;
}

OperatorCounter::OperatorCounter(std::string first_phase) {
  phases_.emplace_back(std::move(first_phase), OperatorCounts{});
  OperatorCounter* expected = nullptr;
  if (!active_counter.compare_exchange_strong(expected, this)) {
    throw std::logic_error("OperatorCounter: another counter is active");
  }
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end)
                                      .needsInputs(accelerator_present())
                                      .scopes({at::RecordScope::FUNCTION}));
}

OperatorCounter::~OperatorCounter() {
  at::removeCallback(handle_);
  active_counter.store(nullptr);
}

void OperatorCounter::begin_phase(const std::string& phase) {
  const std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < phases_.size(); ++i) {
    if (phases_[i].first == phase) {
      current_ = i;
      return;
    }
  }
  phases_.emplace_back(phase, OperatorCounts{});
  current_ = phases_.size() - 1;
}

void OperatorCounter::record(const char* name, bool sync) {
  const std::lock_guard lock(mutex_);
  OperatorCounts& counts = phases_[current_].second;
  ++counts.calls;
  if (sync) ++counts.syncs;
  ++by_operator_[name];
}

std::vector<std::pair<std::string, OperatorCounts>> OperatorCounter::phases() const {
  const std::lock_guard lock(mutex_);
  return phases_;
}

OperatorCounts OperatorCounter::total() const {
  const std::lock_guard lock(mutex_);
  OperatorCounts sum;
  for (const auto& [phase, counts] : phases_) sum += counts;
  return sum;
}

std::map<std::string, std::int64_t> OperatorCounter::calls_by_operator() const {
  const std::lock_guard lock(mutex_);
  return by_operator_;
}

}  // namespace tft
