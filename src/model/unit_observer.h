// Where each unit's forward pass begins and ends, told to whoever installed an observer on the
// running thread: the budget planner reads the bytes each unit keeps and gives each its own
// recompute clock (train/planning_step.h). TFTModel::forward announces its units in forward
// order; reruns of checkpointed segments in backward are not announced. Without an observer
// the cost is one thread-local read per unit.
#pragma once

#include <cstddef>

#include "common/thread_slot.h"

namespace tft {

// Called on the thread that runs forward, between its kernels: an observer that reads
// anything from the device is the one synchronising it. Must not throw.
class UnitObserver {
 public:
  virtual ~UnitObserver() = default;
  virtual void unit_begins(std::size_t unit) noexcept = 0;
  virtual void unit_ends(std::size_t unit) noexcept = 0;
};

// Installs an observer (null: none) on this thread for the scope's lifetime.
using UnitObserverScope = ThreadSlot<UnitObserver>::Scope;

// Announces `unit` to this thread's observer, if any, from construction to destruction.
class ObservedUnit {
 public:
  explicit ObservedUnit(std::size_t unit)
      : unit_(unit), observer_(ThreadSlot<UnitObserver>::current().get()) {
    if (observer_ != nullptr) observer_->unit_begins(unit_);
  }
  ~ObservedUnit() {
    if (observer_ != nullptr) observer_->unit_ends(unit_);
  }
  ObservedUnit(const ObservedUnit&) = delete;
  ObservedUnit& operator=(const ObservedUnit&) = delete;

 private:
  std::size_t unit_;
  UnitObserver* observer_;
};

}  // namespace tft
