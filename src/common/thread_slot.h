// One shared object per thread, installed for a scope's lifetime: the pattern behind a
// trainer's generators (checkpoint/generators.h), recompute clock (checkpoint/recompute.h) and
// CPU memory account (memory/tracking_allocator.h), which code deep inside a step reads without
// every call passing them down.
#pragma once

#include <memory>
#include <utility>

namespace tft {

template <typename T>
class ThreadSlot {
 public:
  // What this thread has installed (null: nothing).
  static const std::shared_ptr<T>& current() { return slot(); }

  // Installs `value` (null: nothing) on this thread until the scope ends, then puts back what
  // was installed before.
  class Scope {
   public:
    explicit Scope(std::shared_ptr<T> value) : previous_(std::exchange(slot(), std::move(value))) {}
    ~Scope() { slot() = std::move(previous_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::shared_ptr<T> previous_;
  };

 private:
  static std::shared_ptr<T>& slot() {
    thread_local std::shared_ptr<T> installed;
    return installed;
  }
};

}  // namespace tft
