// What both planners' tests check after planning (checkpoint_planning.h, budget_planning.h):
// the model, its checkpointing and mode, its gradients and the random stream are as they were.
// Include it last but for support/cmocka_cpp.h, which it includes (its helpers assert).
#pragma once

#include <functional>

#include <torch/types.h>

#include "checkpoint/checkpoint_config.h"
#include "model/tft_model.h"
#include "store/module_state.h"

#include "support/cmocka_cpp.h"

namespace tft::testing {

// Puts the model in eval mode with uniform(2) checkpointing and unit 1 limited to 3 chunks,
// runs `plan`, and checks that the planner left all of that, the weights, zero gradients and
// the random stream (the next draw is the one it would have been) as they were.
inline void expect_planning_leaves_the_model_alone(TFTModel& model,
                                                   const std::function<void()>& plan) {
  const CheckpointConfig before = CheckpointConfig::uniform(2);
  model->set_checkpointing(before);
  model->set_checkpointed_chunks({{1, 3}});
  model->eval();
  const ModuleState weights = copy_module_state(*model);
  torch::manual_seed(99);
  const torch::Tensor expected_draw = torch::rand({4});
  torch::manual_seed(99);
  plan();
  assert_true(torch::equal(torch::rand({4}), expected_draw));
  assert_true(module_states_equal(weights, copy_module_state(*model)));
  assert_true(model->checkpointing() == before);
  assert_true(model->checkpointed_chunks() == (ChunkLimits{{1, 3}}));
  assert_false(model->is_training());
  for (const auto& p : model->parameters()) {
    assert_true(p.grad().abs().sum().item<double>() == 0.0);
  }
}

}  // namespace tft::testing
