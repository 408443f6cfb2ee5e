// Gradient (activation) checkpointing configuration: which units of the model recompute
// their activations in backward instead of storing them.
//
// Mirrors the `CheckpointConfig` of the Rust crate the project was seeded from
// (shared/seeds/000_*.txt): the same four strategies, the same sub-layer flags and minimum
// interval, and the same formulas for should_checkpoint / memory_savings / compute_overhead
// (shared/seeds/README.md), so predicted figures agree with the original. The formulas are
// the seed's estimates, not measurements; the memory meter reports measured figures beside
// them.
//
// Indices refer to the model's units in forward order (DESIGN.md, "unit"). This file knows
// nothing about YAML or JSON; see checkpoint_config_io.h.
#pragma once

#include "checkpoint/boundary_dtype.h"
#include "checkpoint/memory_budget.h"

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tft {

// Strategy alternatives; CheckpointStrategy is the Rust enum as a std::variant.

// Checkpoint nothing: every activation is stored.
struct NoCheckpointing {};

// Checkpoint every `interval`-th unit: 0, interval, 2*interval, ...
struct UniformStrategy {
  std::size_t interval = 1;
};

// Checkpoint exactly the listed units (order does not matter; duplicates are invalid).
struct SelectiveStrategy {
  std::vector<std::size_t> layers;
};

// Derive an interval from a memory target: keep roughly `memory_fraction` of the full
// activation memory for a model of `num_layers` units.
struct DynamicStrategy {
  std::size_t num_layers = 1;
  double memory_fraction = 1.0;
};

using CheckpointStrategy =
    std::variant<NoCheckpointing, UniformStrategy, SelectiveStrategy, DynamicStrategy>;

bool operator==(const NoCheckpointing&, const NoCheckpointing&);
bool operator!=(const NoCheckpointing&, const NoCheckpointing&);
bool operator==(const UniformStrategy& a, const UniformStrategy& b);
bool operator!=(const UniformStrategy& a, const UniformStrategy& b);
bool operator==(const SelectiveStrategy& a, const SelectiveStrategy& b);
bool operator!=(const SelectiveStrategy& a, const SelectiveStrategy& b);
bool operator==(const DynamicStrategy& a, const DynamicStrategy& b);
bool operator!=(const DynamicStrategy& a, const DynamicStrategy& b);

// One broken rule, as found by CheckpointConfig::find_problem. `field` is the schema key
// that broke it ("interval", "layers", "num_layers", "memory_fraction",
// "min_checkpoint_interval") so a loader can point at that key's line; `message` is the full
// text, e.g. "checkpoint.interval: must be at least 1 (got 0)".
struct CheckpointProblem {
  std::string field;
  std::string message;
};

// Plain data with defaults, like every config struct here: the fields are public and may be
// set directly, so nothing is guaranteed valid until validate() says so. The named
// constructors give valid values (dynamic() checks its arguments).
class CheckpointConfig {
 public:
  CheckpointStrategy strategy = NoCheckpointing{};
  // Whether the attention sub-layer of an attention unit is recomputed.
  bool checkpoint_attention = false;
  // Whether the position-wise feed-forward sub-layer of an attention unit is recomputed.
  bool checkpoint_ffn = false;
  // Lower bound on the interval the dynamic strategy derives (the seed uses it nowhere else).
  std::size_t min_checkpoint_interval = 1;
  // How checkpointed segments keep their inputs until backward (boundary_dtype.h). Not
  // float32: gradients are close to, no longer bitwise equal to, the un-checkpointed run's.
  BoundaryDtype boundary_dtype = BoundaryDtype::kFloat32;
  // An activation budget for the budget planner (memory_budget.h), which then chooses the
  // units, chunks and boundary dtype itself: only with strategy none and float32 boundaries
  // (find_problem). Not part of the seed: its formulas see strategy none here.
  std::optional<MemoryBudget> memory_budget;
  // Whether units that recompute nothing still run in their time chunks, each chunk one
  // autograd segment, as the checkpointed units do. Off (the default), such a unit runs whole:
  // one plain graph, no chunks and no nested autograd engine, which is far fewer operator calls
  // (each a kernel launch on a GPU). Gradients then equal the un-checkpointed run's within the
  // bound that docs/config.md documents. On, every strategy's gradients are bitwise equal to
  // strategy none's run with this switch on: the partition the parity tests and tft-bench's
  // --bitwise check use. Not part of the seed.
  bool chunk_every_unit = false;

  // Default-constructed == none(): both flags false, min interval 1 (the seed's Default),
  // float32 boundaries.
  CheckpointConfig() = default;

  // The strategy constructors set both sub-layer flags true and min interval 1.
  // uniform(0) is accepted, as in the seed (it checkpoints nothing), but fails validate().
  [[nodiscard]] static CheckpointConfig uniform(std::size_t interval);
  [[nodiscard]] static CheckpointConfig selective(std::vector<std::size_t> layers);
  // Throws ConfigError when num_layers == 0 or memory_fraction is not a finite number in
  // [0, 1]; the message names the argument and its value.
  [[nodiscard]] static CheckpointConfig dynamic(std::size_t num_layers, double memory_fraction);
  [[nodiscard]] static CheckpointConfig none();

  // Builders: a modified copy, the receiver is untouched (the seed's `self -> Self`).
  [[nodiscard]] CheckpointConfig with_checkpoint_attention(bool checkpoint) const;
  [[nodiscard]] CheckpointConfig with_checkpoint_ffn(bool checkpoint) const;
  [[nodiscard]] CheckpointConfig with_min_interval(std::size_t interval) const;
  [[nodiscard]] CheckpointConfig with_boundary_dtype(BoundaryDtype dtype) const;

  // Whether unit `layer_idx` is recomputed. uniform(k): k > 0 && i % k == 0;
  // selective(L): i in L; dynamic: i % dynamic_interval() == 0; none: never.
  bool should_checkpoint(std::size_t layer_idx) const;

  // Predicted fraction of activation memory saved for a model of `num_layers` units, by the
  // seed's formulas (not clamped: selective with more entries than units goes negative, as in
  // the seed). Deliberate deviation: selective with num_layers == 0 returns 0 instead of
  // dividing by zero.
  double memory_savings(std::size_t num_layers) const;

  // Predicted multiplicative compute cost (1.0 = no overhead), by the seed's formulas.
  // Deliberate deviation: selective with num_layers == 0 returns 1 instead of dividing by 0.
  double compute_overhead(std::size_t num_layers) const;

  // The interval the dynamic strategy uses:
  // max(max(1, trunc(memory_fraction * num_layers)), min_checkpoint_interval).
  // 0 when the strategy is not dynamic. A non-finite or negative fraction (only possible by
  // setting the field directly) counts as 0 here so the call never has undefined behaviour.
  std::size_t dynamic_interval() const;

  // The seed's rules (uniform interval 0, selective duplicates, dynamic num_layers 0 or a
  // fraction that is not a number in [0, 1], NaN and infinities included) plus stricter
  // rules: min_checkpoint_interval must be at least 1 (a minimum gap of 0 units between
  // checkpoints means nothing; the seed accepted it silently), and a memory budget must be
  // positive (or auto) and comes without a strategy other than none and without compressed
  // boundaries (the planner chooses both; field "memory_budget", or "boundary_dtype").
  // Throws ConfigError with the message of find_problem().
  void validate() const;
  // validate() plus: selective indices must be < num_units. Uniform and dynamic fit any
  // model size (an interval past the end simply checkpoints unit 0 only).
  void validate(std::size_t num_units) const;

  // The first broken rule, or nothing; validate() throws exactly this message. Exposed so a
  // loader can attach the line of the offending key.
  std::optional<CheckpointProblem> find_problem() const;
  std::optional<CheckpointProblem> find_problem(std::size_t num_units) const;

  // "No checkpointing", "Uniform checkpointing every 2 layers",
  // "Selective checkpointing at 2 layers",
  // "Dynamic checkpointing (6 layers, 30.0% memory target)" (the seed's wording), followed by
  // ", int8 boundaries" (or bfloat16) when they are compressed; with a memory budget
  // "Checkpointing planned for a memory budget of 900.0 MiB" (or "of auto").
  std::string summary() const;

  // "none", "uniform", "selective" or "dynamic": the schema's `strategy` value.
  std::string strategy_name() const;
};

bool operator==(const CheckpointConfig& a, const CheckpointConfig& b);
bool operator!=(const CheckpointConfig& a, const CheckpointConfig& b);

}  // namespace tft
