// Fake quantization for quantization-aware training (QAT): a tensor is rounded to the int grid
// it would have in an int8 model and mapped back to float (LibTorch's fake_quantize_* kernels),
// and the gradient passes straight through inside the grid's range and is 0 outside it.
//
// Each FakeQuantizer owns a moving-average min/max observer (PyTorch's defaults: averaging
// constant 0.01, the first observation taken as is). What makes it compatible with gradient
// checkpointing is *when* the observer updates:
//  * The scale a step quantizes with is the one committed before the step. During the step
//    the observer only collects the range it sees (the min and max over every call, so over
//    every time chunk), and commit_observations() folds that range in once, after backward.
//  * A checkpointed segment recomputes in backward with the same scale its forward used (the
//    committed one has not moved), and a recompute never observes (is_recomputing()).
// So every checkpoint strategy gives gradients and observer states bitwise equal to no
// checkpointing in the same partition (checkpoint.chunk_every_unit), and the scales do not
// depend on how a unit is cut into time chunks.
//
// Until its first commit a quantizer is uncalibrated and passes its input through: the first
// step with QAT on calibrates. It observes only in training mode and while observing is on
// (the trainer turns it on from training.qat.start_epoch to freeze_observers_epoch).
//
// The state lives in buffers (saved with the model and in snapshots); after loading buffers
// call refresh_fake_quantizers(), which reads which quantizers are calibrated back to the host
// (a forward never reads the device to decide).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace tft {

enum class QuantizationScheme {
  // One scale and zero point for the whole tensor, grid [0, 2^bits - 1] (layer inputs).
  PerTensorAffine,
  // One scale per slice along dim 0 (a weight's output channels), zero point 0, grid
  // [-2^(bits-1), 2^(bits-1) - 1]. For weights: it observes once per step, as a weight changes
  // only between steps.
  PerChannelSymmetric,
};

class FakeQuantizerImpl : public torch::nn::Module {
 public:
  // `channels`: the size of dim 0 for PerChannelSymmetric (1 for PerTensorAffine).
  FakeQuantizerImpl(QuantizationScheme scheme, std::int64_t bits, std::int64_t channels = 1);

  // Observes `x` (training, observing, not recomputing), then fake-quantizes it with the
  // committed scale; `x` itself until calibrated. Differentiable (straight-through).
  at::Tensor forward(const at::Tensor& x);

  void set_observing(bool observing) { observing_ = observing; }
  bool observing() const { return observing_; }
  bool calibrated() const { return calibrated_; }

  // Forgets the range collected since the last commit (say, by a planning pass).
  void discard_observations();
  // Folds the range collected since the last commit into the moving average and derives the
  // scale and zero point the next forward uses. Nothing to fold: nothing changes.
  void commit_observations();
  // Reads the calibrated flag back from its buffer (after the buffers were loaded).
  void refresh();

  static constexpr double kAveragingConstant = 0.01;

 private:
  void observe(const at::Tensor& x);

  QuantizationScheme scheme_;
  std::int64_t quant_min_ = 0, quant_max_ = 0;
  at::Tensor running_min_, running_max_, scale_, zero_point_, calibrated_flag_;  // buffers
  // This step's observations, one per call (a weight's: one per step); not state.
  std::vector<at::Tensor> step_min_, step_max_;
  bool observing_ = false;
  bool calibrated_ = false;
};
TORCH_MODULE(FakeQuantizer);

// Every fake quantizer in `root`'s tree (none in a model without QAT).
std::vector<FakeQuantizer> fake_quantizers(torch::nn::Module& root);

// The functions below apply FakeQuantizerImpl's method of the same idea to every quantizer.
void set_fake_quantizers_observing(torch::nn::Module& root, bool observing);
void discard_fake_quantizer_observations(torch::nn::Module& root);
void commit_fake_quantizer_observations(torch::nn::Module& root);
void refresh_fake_quantizers(torch::nn::Module& root);

// Every quantizer's buffers, in tree order (a job broadcasts rank 0's after each commit).
std::vector<at::Tensor> fake_quantizer_buffers(torch::nn::Module& root);

}  // namespace tft
