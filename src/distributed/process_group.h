// A data-parallel job's collectives on LibTorch's c10d: a TCPStore for the rendezvous (served
// by rank 0 at MASTER_ADDR:MASTER_PORT) and a Gloo process group, the same engine and
// conventions as PyTorch's DistributedDataParallel. Every collective waits at most the timeout:
// a rank that died or hangs makes the others fail with an IoError naming this rank and the
// operation, never wait forever.
#pragma once

#include "distributed/launch_env.h"

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace tft::distributed {

class ProcessGroup {
 public:
  // Joins the job: waits up to `timeout` for all world_size processes to meet. IoError when
  // the master cannot be reached or the others do not come in time.
  ProcessGroup(const LaunchEnv& env, std::chrono::milliseconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }

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
  std::unique_ptr<Impl> impl_;
};

}  // namespace tft::distributed
