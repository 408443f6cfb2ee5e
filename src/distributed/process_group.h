// A data-parallel job's collectives on LibTorch's c10d: a TCPStore for the rendezvous (served
// by rank 0 at MASTER_ADDR:MASTER_PORT) and a Gloo or NCCL process group, the same engine and
// conventions as PyTorch's DistributedDataParallel. Every collective waits at most the timeout:
// a rank that died or hangs makes the others fail, never wait forever. Gloo's failures are an
// IoError naming this rank and the operation; NCCL's watchdog ends the process instead, as in
// PyTorch (NCCL's collectives run on the GPU, so the host never waits on one to time it).
// Joining a job sets SIGPIPE to ignored when it has the default disposition (as CPython does):
// a peer that died must be an error here, not a signal that ends this rank.
#pragma once

#include "config/train_config.h"
#include "distributed/launch_env.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace tft::distributed {

// Whether this build has c10d's NCCL backend (a CUDA build with NCCL's headers: TFT_WITH_NCCL).
bool nccl_in_build();

class ProcessGroup {
 public:
  // Joins the job: waits up to `timeout` for all world_size processes to meet. IoError when
  // the master cannot be reached or the others do not come in time. `backend` is Gloo or Nccl
  // (never Auto); NCCL's tensors live on `device`, this rank's GPU, which it binds to.
  ProcessGroup(const LaunchEnv& env, std::chrono::milliseconds timeout,
               DistributedBackend backend = DistributedBackend::Gloo,
               const c10::Device& device = c10::Device(c10::DeviceType::CPU));
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }

  DistributedBackend backend() const { return backend_; }

  // Overwrites every rank's tensors with rank 0's (same shapes and dtypes on every rank).
  void broadcast(const std::vector<at::Tensor>& tensors);

  // Replaces each defined gradient of `parameters` by its mean over the ranks. The gradients
  // are flattened into buckets of at most `bucket_bytes` (per dtype), one all-reduce each, as
  // DDP does; every rank must pass the same parameters with the same gradients defined.
  void average_gradients(const std::vector<at::Tensor>& parameters,
                         std::int64_t bucket_bytes = std::int64_t{25} << 20);

  // The element-wise sum over ranks (metric sums and counts), in double precision.
  std::vector<double> sum(const std::vector<double>& values);

  // Returns once every rank has called it.
  void barrier();

 private:
  struct Impl;
  LaunchEnv env_;
  std::chrono::milliseconds timeout_;
  DistributedBackend backend_;
  c10::Device device_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tft::distributed
