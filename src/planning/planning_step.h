// One measured training step (forward and loss, and backward unless told otherwise; no
// optimizer step) of a model under a given checkpoint setting: what both planners measure
// (dynamic: checkpoint_planning.h, memory_budget: budget_planning.h).
//
// Every measurement starts from the same random state, so dropout draws the same masks in all
// of them, and ends with the gradients zeroed. Besides the step's activation peak and times,
// it records per unit (model/unit_observer.h) the bytes the unit's forward left held and the
// time it took: on CUDA the observer synchronises the device at each unit's start and end, so
// those times are the GPU's (planning only; training steps are not observed); on the CPU the
// time is the process's CPU time. When the meter
// goes, the model's checkpointing, chunk limits and train/eval mode and the random state are
// put back as they were.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "checkpoint/checkpoint_config.h"
#include "checkpoint/rng_state.h"
#include "model/tft_model.h"

namespace tft {

namespace memory {
class MemoryMeter;
}

// Strategy none in `request`'s partition (checkpoint.chunk_every_unit): what a planner measures
// a plan against.
CheckpointConfig none_like(const CheckpointConfig& request);

// Forward and loss on the first `rows` rows of the planning batch (all of them: its size).
using PlanningStep = std::function<at::Tensor(std::int64_t rows)>;

struct UnitMeasurement {
  std::int64_t kept_bytes = 0;  // held after the unit's forward minus before it (may be < 0)
  // Its forward pass: on a GPU wall time, on the CPU the process's CPU time (all threads;
  // common/cpu_clock.h), the cost measure that other load on the machine disturbs least.
  double forward_seconds = 0.0;
  // Forward-only measurements: the peak inside its forward above what it held at the end
  // (checkpointed, that is one chunk's temporaries: what rerunning a chunk adds in backward).
  std::int64_t workspace_bytes = 0;
};

// What running a unit in its chunks costs a step beyond running it whole (planner.h's
// chunking_seconds), from its forward measured whole (strategy none) and in its chunks (the
// unit checkpointed): twice the difference, since its backward runs in the same chunks, and 0
// where the chunks were no slower. Both in the units' cost clock (UnitMeasurement).
double chunking_seconds(const UnitMeasurement& whole, const UnitMeasurement& chunked);

struct StepMeasurement {
  std::int64_t peak_bytes = 0;         // activation peak of the step (forward_only: at its end)
  std::int64_t forward_end_bytes = 0;  // held at the end of forward (the loss computed)
  double seconds = 0.0;                // the whole step
  double cpu_seconds = 0.0;            // the process's CPU time in it
  double recompute_seconds = 0.0;      // reruns of checkpointed segments in backward
  std::vector<UnitMeasurement> units;  // in unit order
};

class PlanningMeter {
 public:
  // `batch_rows`: the planning batch's rows (what `step` runs when asked for all of them).
  PlanningMeter(TFTModel& model, PlanningStep step, std::int64_t batch_rows,
                const c10::Device& device);
  ~PlanningMeter();
  PlanningMeter(const PlanningMeter&) = delete;
  PlanningMeter& operator=(const PlanningMeter&) = delete;

  // One step under `config` and `limits` (TFTModel::set_checkpointed_chunks) on the first
  // `rows` rows (0: all). forward_only: no backward; the peak is then the bytes held at the
  // end of forward above those held before it.
  StepMeasurement measure(const CheckpointConfig& config, const ChunkLimits& limits = {},
                          std::int64_t rows = 0, bool forward_only = false);

  // Seconds spent in measure() so far: wall time, and the process's CPU time.
  double seconds() const { return seconds_; }
  double cpu_seconds() const { return cpu_seconds_; }
  std::int64_t batch_rows() const { return batch_rows_; }
  const c10::Device& device() const { return device_; }

 private:
  TFTModel& model_;
  PlanningStep step_;
  std::int64_t batch_rows_;
  c10::Device device_;
  CheckpointConfig previous_;
  ChunkLimits previous_limits_;
  bool was_training_;
  std::vector<at::Tensor> parameters_;
  RngStateGuard restore_rng_;
  RngState start_;
  std::unique_ptr<memory::MemoryMeter> meter_;
  double seconds_ = 0.0;
  double cpu_seconds_ = 0.0;
};

}  // namespace tft
