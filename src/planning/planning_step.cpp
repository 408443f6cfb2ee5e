#include "planning/planning_step.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "checkpoint/recompute.h"
#include "common/cpu_clock.h"
#include "common/device.h"
#include "memory/memory_meter.h"
#include "model/unit_observer.h"
#include "optim/gradient_buffers.h"

namespace tft {

double chunking_seconds(const UnitMeasurement& whole, const UnitMeasurement& chunked) {
  return 2.0 * std::max(0.0, chunked.forward_seconds - whole.forward_seconds);
}

CheckpointConfig none_like(const CheckpointConfig& request) {
  CheckpointConfig none = CheckpointConfig::none();
  none.chunk_every_unit = request.chunk_every_unit;
  return none;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A unit's cost clock: on a GPU wall time between synchronisations; on the CPU the process's
// CPU time (common/cpu_clock.h), which other load on a shared machine inflates less.
double cost_clock(const c10::Device& device) {
  return device.is_cpu() ? process_cpu_seconds()
                         : std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// Records each unit's kept bytes and forward time into `units`.
class UnitRecorder : public UnitObserver {
 public:
  // record_workspace: also each unit's peak above its end level. It moves the meter's peak
  // window, so only for steps whose peak is not read (forward only).
  UnitRecorder(memory::MemoryMeter& meter, const c10::Device& device,
               std::vector<UnitMeasurement>& units, bool record_workspace)
      : meter_(meter),
        device_(device),
        units_(units),
        record_workspace_(record_workspace),
        began_bytes_(units.size()),
        began_(units.size()) {}

  void unit_begins(std::size_t unit) noexcept override {
    if (unit >= units_.size()) return;
    sync();
    began_bytes_[unit] = meter_.current_bytes();
    if (record_workspace_) meter_.reset_peak();
    began_[unit] = cost_clock(device_);
  }

  void unit_ends(std::size_t unit) noexcept override {
    if (unit >= units_.size()) return;
    sync();
    units_[unit].forward_seconds += cost_clock(device_) - began_[unit];
    const std::int64_t now = meter_.current_bytes();
    units_[unit].kept_bytes += now - began_bytes_[unit];
    if (record_workspace_) {
      units_[unit].workspace_bytes =
          std::max(units_[unit].workspace_bytes, meter_.peak_bytes() - now);
    }
  }

 private:
  // A unit's kernels may still run on a GPU when its forward returns; planning only.
  void sync() noexcept {
    try {
      synchronize(device_);
    } catch (...) {  // the step's own next call reports a broken device
    }
  }

  memory::MemoryMeter& meter_;
  c10::Device device_;
  std::vector<UnitMeasurement>& units_;
  bool record_workspace_;
  std::vector<std::int64_t> began_bytes_;
  std::vector<double> began_;
};

}  // namespace

PlanningMeter::PlanningMeter(TFTModel& model, PlanningStep step, std::int64_t batch_rows,
                             const c10::Device& device)
    : model_(model),
      step_(std::move(step)),
      batch_rows_(batch_rows),
      device_(device),
      previous_(model->checkpointing()),
      previous_limits_(model->checkpointed_chunks()),
      was_training_(model->is_training()),
      parameters_(model->parameters()),
      restore_rng_(device),
      start_(RngState::capture(device)),
      meter_(std::make_unique<memory::MemoryMeter>(device)) {}

PlanningMeter::~PlanningMeter() {
  model_->set_checkpointing(previous_);
  model_->set_checkpointed_chunks(previous_limits_);
  model_->train(was_training_);
  zero_gradients(parameters_);
}

StepMeasurement PlanningMeter::measure(const CheckpointConfig& config, const ChunkLimits& limits,
                                       std::int64_t rows, bool forward_only) {
  const auto begin = Clock::now();
  const double cpu_begin = process_cpu_seconds();
  model_->set_checkpointing(config);
  model_->set_checkpointed_chunks(limits);
  model_->train();
  start_.restore();  // the same dropout masks in every measurement
  StepMeasurement m;
  m.units.resize(model_->units().size());
  {
    memory::ActivationProbe probe(*meter_);
    const std::int64_t recompute_before = checkpoint::recompute_nanoseconds();
    synchronize(device_);
    const auto started = Clock::now();
    const double cpu_started = process_cpu_seconds();
    at::Tensor loss;
    {
      const UnitObserverScope observe(
          std::make_shared<UnitRecorder>(*meter_, device_, m.units, forward_only));
      loss = step_(rows > 0 ? rows : batch_rows_);
    }
    m.forward_end_bytes = meter_->current_bytes() - probe.baseline_bytes();
    if (forward_only) {
      m.peak_bytes = m.forward_end_bytes;
    } else {
      loss.backward();
    }
    loss = at::Tensor();  // frees a forward-only pass's graph
    synchronize(device_);
    m.seconds = seconds_since(started);
    m.cpu_seconds = process_cpu_seconds() - cpu_started;
    m.recompute_seconds =
        1e-9 * static_cast<double>(checkpoint::recompute_nanoseconds() - recompute_before);
    if (!forward_only) m.peak_bytes = probe.activation_peak_bytes();
  }
  zero_gradients(parameters_);
  seconds_ += seconds_since(begin);
  cpu_seconds_ += process_cpu_seconds() - cpu_begin;
  return m;
}

}  // namespace tft
