#include "optim/fused_adam.h"

#include "common/torch_compat.h"

#include <ATen/ops/full.h>
#include <ATen/ops/zeros_like.h>
#include <torch/utils.h>

#include <map>
#include <vector>

#if TFT_HAS_FUSED_ADAM
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#endif

namespace tft {

#if TFT_HAS_FUSED_ADAM
namespace {

// Whether one fused call can update these parameters: dense, on one device, where LibTorch
// has the kernel.
bool fusable(const std::vector<at::Tensor>& params) {
  if (params.empty()) return false;
  const c10::Device device = params.front().device();
  if (!device.is_cpu() && !device.is_cuda()) return false;
  for (const auto& p : params) {
    if (p.device() != device || p.is_sparse() || p.grad().is_sparse() ||
        p.scalar_type() != params.front().scalar_type()) {
      return false;
    }
  }
  return true;
}

}  // namespace
#endif

FusedAdam::FusedAdam(const std::vector<torch::Tensor>& params,
                     const torch::optim::AdamOptions& options, double weight_decay)
    : torch::optim::Adam(params, options), weight_decay_(weight_decay) {
  TORCH_CHECK(weight_decay >= 0.0, "FusedAdam: weight_decay must be >= 0, got ", weight_decay);
  TORCH_CHECK(weight_decay == 0.0 || options.weight_decay() == 0.0,
              "FusedAdam: a decoupled weight_decay excludes AdamOptions' L2 weight_decay");
}

// As torch::optim::AdamW::step: the closure, then p *= 1 - lr * wd for every parameter with a
// gradient, then Adam's update (whose L2 term is 0).
torch::Tensor FusedAdam::unfused_step(LossClosure closure) {
  if (weight_decay_ == 0.0) return torch::optim::Adam::step(std::move(closure));
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  {
    torch::NoGradGuard no_grad;
    for (auto& group : param_groups_) {
      const double lr = static_cast<const torch::optim::AdamOptions&>(group.options()).lr();
      for (auto& p : group.params()) {
        if (p.grad().defined()) p.mul_(1.0 - lr * weight_decay_);
      }
    }
  }
  torch::optim::Adam::step();
  return loss;
}

torch::Tensor FusedAdam::step(LossClosure closure) {
#if !TFT_HAS_FUSED_ADAM
  return unfused_step(std::move(closure));
#else
  std::vector<std::vector<at::Tensor> > groups_params;
  for (auto& group : param_groups_) {
    std::vector<at::Tensor> params;
    for (const auto& p : group.params()) {
      if (p.grad().defined()) params.push_back(p);
    }
    if (!params.empty() && !fusable(params)) return unfused_step(std::move(closure));
    groups_params.push_back(std::move(params));
  }

  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (std::size_t g = 0; g < param_groups_.size(); ++g) {
    const auto& params = groups_params[g];
    if (params.empty()) continue;
    const auto& options = static_cast<const torch::optim::AdamOptions&>(param_groups_[g].options());
    std::vector<at::Tensor> grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps;
    // The kernel reads each parameter's step count from a tensor; parameters at the same count
    // share one (all of them, in a training loop that steps every parameter every time).
    std::map<std::int64_t, at::Tensor> step_tensors;
    for (const auto& p : params) {
      auto& slot = state_[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamParamState>();
        fresh->step(0);
        fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        if (options.amsgrad()) fresh->max_exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<torch::optim::AdamParamState&>(*slot);
      state.step(state.step() + 1);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      if (options.amsgrad()) max_exp_avg_sqs.push_back(state.max_exp_avg_sq());
      auto& step_tensor = step_tensors[state.step()];
      if (!step_tensor.defined()) {
        // A fill on the device, not a copy from the host: nothing waits for the GPU.
        step_tensor = at::full({}, static_cast<double>(state.step()),
                               at::TensorOptions().dtype(at::kFloat).device(p.device()));
      }
      steps.push_back(step_tensor);
    }
    if (weight_decay_ != 0.0) {
      // AdamW: the kernel shrinks each parameter by lr * weight_decay before Adam's update.
      at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, options.lr(),
                        std::get<0>(options.betas()), std::get<1>(options.betas()), weight_decay_,
                        options.eps(), options.amsgrad(), /*maximize=*/false);
    } else {
      at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, options.lr(),
                       std::get<0>(options.betas()), std::get<1>(options.betas()),
                       options.weight_decay(), options.eps(), options.amsgrad(),
                       /*maximize=*/false);
    }
  }
  return loss;
#endif
}

}  // namespace tft
