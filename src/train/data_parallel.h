// The trainer's side of a data-parallel job (docs/distributed.md), with PyTorch DDP's
// semantics: every rank starts from rank 0's weights, trains on its own share of each global
// batch, and steps with the gradient the whole global batch gives; validation is split over
// the ranks and its sums added up; rank 0 alone writes files.
//
// A single process (no launcher, or WORLD_SIZE=1) is the same code with a group of one: every
// method is then the identity, and nothing is sent anywhere.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <c10/core/Device.h>
#include <torch/nn/module.h>

#include "config/train_config.h"
#include "data/window_sampler.h"
#include "model/tft_model.h"
#include "report/metrics.h"

namespace tft {

namespace distributed {
class ProcessGroup;
}

class TimeSeriesDataset;

// One step's work for this rank: its windows, and the size of the global batch they belong to
// (what reduce_gradients weights its share by).
struct RankBatch {
  std::vector<Window> windows;
  std::int64_t global_windows = 0;
};

// The c10d backend a job whose ranks train on `device` uses: `auto` is NCCL on CUDA devices
// where the build has it (`nccl_in_build`) and Gloo otherwise, PyTorch's default. ConfigError
// for nccl on a CPU device; UnsupportedError for nccl in a build without it. Never Auto.
DistributedBackend choose_backend(DistributedBackend requested, const c10::Device& device,
                                  bool nccl_in_build);

class DataParallel {
 public:
  // Joins the job the environment describes (distributed/launch_env.h) with the config's
  // backend and timeout, or stays a group of one; this rank trains on `device` (device()).
  // UnsupportedError for a job in a build without TFT_WITH_DISTRIBUTED and as choose_backend
  // says; IoError when joining fails.
  DataParallel(const DistributedConfig& config, const c10::Device& device);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }
  bool writes_outputs() const { return rank_ == 0; }

  // This rank's device: the one asked for, where "cuda" without an index is cuda:LOCAL_RANK in
  // a job.
  const c10::Device& device() const { return device_; }

  // The backend the job reduces with (Gloo for a group of one, which never sends anything).
  DistributedBackend backend() const { return backend_; }

  // This rank's step of each global batch: a contiguous share of its windows, the shares as
  // equal as they can be. A global batch with fewer windows than ranks is dropped by all, so
  // every rank runs the same number of steps.
  std::vector<RankBatch> rank_batches(const std::vector<std::vector<Window>>& global_batches) const;

  // Makes every rank's gradients the gradient of the mean loss over the whole global batch:
  // each rank's (the mean over its `local_windows`) weighted by its share of
  // `global_windows`, then summed over the ranks.
  void reduce_gradients(const std::vector<at::Tensor>& parameters, std::int64_t local_windows,
                        std::int64_t global_windows);

  // Every rank's copies of the module's parameters and buffers become rank 0's.
  void broadcast_module(torch::nn::Module& module);

  // Rank 0's values into every rank's tensors (same shapes everywhere), in as few messages as
  // their bytes allow.
  void broadcast(const std::vector<at::Tensor>& tensors);

  // The validation metrics over `windows`, each rank evaluating its contiguous share and the
  // sums added up across ranks.
  ValidationMetrics evaluate(TFTModel& model, const TimeSeriesDataset& dataset,
                             const std::vector<Window>& windows, std::int64_t batch_size,
                             const c10::Device& device);

  // The element-wise sum of `values` over the ranks.
  std::vector<double> sum(const std::vector<double>& values);

  // Whether `flag` is true on any rank.
  bool any(bool flag);

  // Wall time spent in reduce_gradients so far (0 for a group of one).
  double reduce_seconds() const { return reduce_seconds_; }

 private:
  int rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  c10::Device device_;
  DistributedBackend backend_ = DistributedBackend::Gloo;
  double reduce_seconds_ = 0.0;
  std::unique_ptr<distributed::ProcessGroup> group_;
};

}  // namespace tft
