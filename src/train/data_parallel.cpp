#include "train/data_parallel.h"

#include "common/error.h"
#include "data/time_series_dataset.h"
#include "distributed/launch_env.h"
#include "report/forecast.h"

#include <torch/utils.h>

#include <chrono>

#ifdef TFT_WITH_DISTRIBUTED
#include "distributed/process_group.h"
#endif

namespace tft {
namespace {

// [begin, end) of part `part` of `n` items cut into `parts` contiguous pieces whose sizes
// differ by at most one (the longer ones first).
std::pair<std::size_t, std::size_t> share(std::size_t n, int parts, int part) {
  const std::size_t p = static_cast<std::size_t>(parts), i = static_cast<std::size_t>(part);
  const std::size_t base = n / p, extra = n % p;
  const std::size_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

}  // namespace

// ProcessGroup is complete here (or never created), so the destructor can delete it.
DataParallel::~DataParallel() = default;

DistributedBackend choose_backend(DistributedBackend requested, const c10::Device& device,
                                  bool nccl_in_build) {
  switch (requested) {
    case DistributedBackend::Gloo: return DistributedBackend::Gloo;
    case DistributedBackend::Auto:
      return device.is_cuda() && nccl_in_build ? DistributedBackend::Nccl
                                               : DistributedBackend::Gloo;
    case DistributedBackend::Nccl:
      if (!device.is_cuda()) {
        throw ConfigError(
            "training.distributed.backend: nccl reduces CUDA tensors only, and "
            "training.device is " +
            device.str() + "; use gloo (or auto)");
      }
      if (!nccl_in_build) {
        throw UnsupportedError(
            "training.distributed.backend: nccl is not in this build (a CUDA build with NCCL's "
            "headers: -DTFT_WITH_CUDA=ON -DTFT_WITH_NCCL=ON); use gloo (or auto), which also "
            "reduces GPU tensors");
      }
      return DistributedBackend::Nccl;
  }
  return DistributedBackend::Gloo;
}

namespace {

bool build_has_nccl() {
#ifdef TFT_WITH_DISTRIBUTED
  return distributed::nccl_in_build();
#else
  return false;
#endif
}

}  // namespace

DataParallel::DataParallel(const DistributedConfig& config, const c10::Device& device)
    : device_(device) {
  const auto env = distributed::launch_env_from_environment();
  if (!env || env->world_size == 1) return;
  if (device.is_cuda() && !device.has_index()) {
    device_ = c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(env->local_rank));
  }
  backend_ = choose_backend(config.backend, device_, build_has_nccl());
#ifdef TFT_WITH_DISTRIBUTED
  rank_ = env->rank;
  world_size_ = env->world_size;
  local_rank_ = env->local_rank;
  group_ = std::make_unique<distributed::ProcessGroup>(
      *env, std::chrono::seconds(config.timeout_seconds), backend_, device_);
#else
  throw UnsupportedError("WORLD_SIZE=" + std::to_string(env->world_size) +
                         ": this build has no distributed training "
                         "(rebuild with -DTFT_WITH_DISTRIBUTED=ON)");
#endif
}

std::vector<RankBatch> DataParallel::rank_batches(
    const std::vector<std::vector<Window>>& global_batches) const {
  std::vector<RankBatch> mine;
  for (const auto& batch : global_batches) {
    if (batch.size() < static_cast<std::size_t>(world_size_)) continue;
    const auto [begin, end] = share(batch.size(), world_size_, rank_);
    mine.push_back({std::vector<Window>(batch.begin() + static_cast<std::ptrdiff_t>(begin),
                                        batch.begin() + static_cast<std::ptrdiff_t>(end)),
                    static_cast<std::int64_t>(batch.size())});
  }
  return mine;
}

void DataParallel::reduce_gradients(const std::vector<at::Tensor>& parameters,
                                    std::int64_t local_windows, std::int64_t global_windows) {
#ifdef TFT_WITH_DISTRIBUTED
  if (!group_) return;
  const auto start = std::chrono::steady_clock::now();
  // average_gradients divides the sum by the world size; a rank whose share is not exactly
  // 1/world of the batch scales its gradient first, so the result is the global batch's mean.
  const double weight =
      static_cast<double>(local_windows) * world_size_ / static_cast<double>(global_windows);
  if (weight != 1.0) {
    torch::NoGradGuard no_grad;
    for (const auto& p : parameters) {
      if (p.grad().defined()) p.grad().mul_(weight);
    }
  }
  group_->average_gradients(parameters);
  reduce_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
#else
  (void)parameters, (void)local_windows, (void)global_windows;
#endif
}

void DataParallel::broadcast_module(torch::nn::Module& module) {
#ifdef TFT_WITH_DISTRIBUTED
  if (!group_) return;
  std::vector<at::Tensor> tensors = module.parameters();
  for (const auto& b : module.buffers()) tensors.push_back(b);
  torch::NoGradGuard no_grad;
  group_->broadcast(tensors);
#else
  (void)module;
#endif
}

void DataParallel::broadcast(const std::vector<at::Tensor>& tensors) {
#ifdef TFT_WITH_DISTRIBUTED
  if (!group_ || tensors.empty()) return;
  torch::NoGradGuard no_grad;
  group_->broadcast(tensors);
#else
  (void)tensors;
#endif
}

ValidationMetrics DataParallel::evaluate(TFTModel& model, const TimeSeriesDataset& dataset,
                                         const std::vector<Window>& windows,
                                         std::int64_t batch_size, const c10::Device& device) {
  if (world_size_ == 1) return evaluate_windows(model, dataset, windows, batch_size, device);
  const auto [begin, end] = share(windows.size(), world_size_, rank_);
  const std::vector<Window> mine(windows.begin() + static_cast<std::ptrdiff_t>(begin),
                                 windows.begin() + static_cast<std::ptrdiff_t>(end));
  MetricAccumulator metrics = accumulate_windows(model, dataset, mine, batch_size, device);
  metrics.set_totals(sum(metrics.totals()));
  return metrics.result();
}

bool DataParallel::any(bool flag) { return sum({flag ? 1.0 : 0.0}).front() > 0.0; }

std::vector<double> DataParallel::sum(const std::vector<double>& values) {
#ifdef TFT_WITH_DISTRIBUTED
  if (group_) return group_->sum(values);
#endif
  return values;
}

}  // namespace tft
