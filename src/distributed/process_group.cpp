#include "distributed/process_group.h"

#include "common/error.h"
#include "common/torch_compat.h"
#include "common/torch_errors.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/tensor.h>
#include <c10/util/irange.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/utils.h>

#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <csignal>
#include <cstdlib>
#include <map>
#include <string>

namespace tft::distributed {

bool nccl_in_build() {
#ifdef USE_C10D_NCCL
  return true;
#else
  return false;
#endif
}

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  // ProcessGroupGloo or ProcessGroupNCCL: the collectives we use are virtuals of their base.
  c10::intrusive_ptr<compat::CollectiveBackend> backend;
};

namespace {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// The network device Gloo's pairs use on this machine: GLOO_SOCKET_IFNAME's interface when set
// (as in PyTorch), the loopback address for a job on one machine, else the one this machine's
// hostname resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  }
  if (is_loopback(master_addr)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// Gloo's TCP pairs write with writev, which raises SIGPIPE when the peer has died; its default
// action would end this rank silently before Gloo reports the closed connection as an error.
// CPython ignores SIGPIPE at start-up, so every PyTorch job runs this way; a host that set a
// disposition of its own keeps it.
void ignore_sigpipe_unless_the_host_handles_it() {
  struct sigaction current{};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    std::signal(SIGPIPE, SIG_IGN);
  }
}

// Flattens `tensors` (grouped by dtype, in order) into buffers of at most `bucket_bytes`, runs
// `collective` on each buffer in place, and copies the results back.
template <typename Collective>
void in_buckets(const std::vector<at::Tensor>& tensors, std::int64_t bucket_bytes,
                const Collective& collective) {
  torch::NoGradGuard no_grad;
  std::map<at::ScalarType, std::vector<at::Tensor>> by_dtype;
  for (const auto& t : tensors) by_dtype[t.scalar_type()].push_back(t);
  for (auto& [dtype, group] : by_dtype) {
    std::size_t begin = 0;
    while (begin < group.size()) {
      std::size_t end = begin;
      std::int64_t bytes = 0;
      do {
        bytes += group[end].numel() * group[end].element_size();
        ++end;
      } while (end < group.size() &&
               bytes + group[end].numel() * group[end].element_size() <= bucket_bytes);
      std::vector<at::Tensor> flat;
      for (std::size_t i = begin; i < end; ++i) flat.push_back(group[i].reshape({-1}));
      at::Tensor buffer = at::cat(flat);
      collective(buffer);
      std::int64_t offset = 0;
      for (std::size_t i = begin; i < end; ++i) {
        const std::int64_t n = group[i].numel();
        group[i].copy_(buffer.slice(0, offset, offset + n).view(group[i].sizes()));
        offset += n;
      }
      begin = end;
    }
  }
}

using Collectives = c10::intrusive_ptr<compat::CollectiveBackend>;

Collectives make_gloo(const c10::intrusive_ptr<c10d::Store>& store, const LaunchEnv& env,
                      std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices.push_back(gloo_device(env.master_addr));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
}

#ifdef USE_C10D_NCCL
// One NCCL communicator on this rank's GPU, created now (as PyTorch does when
// init_process_group is given a device_id) rather than at the first collective, so a rank that
// cannot join fails here, inside the join's error message.
Collectives make_nccl(const c10::intrusive_ptr<c10d::Store>& store, const LaunchEnv& env,
                      std::chrono::milliseconds timeout, const c10::Device& device) {
  c10::cuda::set_device(device.index());
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
  nccl->setBoundDeviceId(device);
  nccl->eagerConnectSingleDevice(device);
  return nccl;
}
#endif

}  // namespace

ProcessGroup::ProcessGroup(const LaunchEnv& env, std::chrono::milliseconds timeout,
                           DistributedBackend backend, const c10::Device& device)
    : env_(env),
      timeout_(timeout),
      backend_(backend),
      device_(device),
      impl_(std::make_unique<Impl>()) {
  const std::string who =
      "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size);
  if (backend == DistributedBackend::Auto) {
    throw InvalidArgumentError(
        "ProcessGroup: choose gloo or nccl (data_parallel's choose_backend)");
  }
  if (backend == DistributedBackend::Nccl &&
      (!nccl_in_build() || !device.is_cuda() || !device.has_index())) {
    throw InvalidArgumentError(
        "ProcessGroup: nccl needs a CUDA build with NCCL and a GPU with an index, got " +
        device.str());
  }
  ignore_sigpipe_unless_the_host_handles_it();
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(env.master_port);
    options.isServer = env.rank == 0 && !env.agent_store;
    options.numWorkers = static_cast<std::size_t>(env.world_size);
    options.waitWorkers = true;
    options.timeout = timeout;
    // Our keys under a prefix of their own: torchrun's agent keeps its keys in the same store.
    impl_->store = c10::make_intrusive<c10d::PrefixStore>(
        "tftrain", c10::make_intrusive<c10d::TCPStore>(env.master_addr, options));
#ifdef USE_C10D_NCCL
    if (backend == DistributedBackend::Nccl) {
      impl_->backend = make_nccl(impl_->store, env, timeout, device);
    }
#endif
    if (!impl_->backend) impl_->backend = make_gloo(impl_->store, env, timeout);
  } catch (const std::exception& e) {
    throw IoError("distributed: " + who + " could not join the job at " + env.master_addr + ":" +
                  std::to_string(env.master_port) + " within " +
                  std::to_string(timeout.count() / 1000) + " s: " + error_text(e, "distributed"));
  }
}

ProcessGroup::~ProcessGroup() {
#ifdef USE_C10D_NCCL
  // NCCL's communicators and watchdog thread are torn down explicitly, as PyTorch's
  // destroy_process_group does; dropping the last reference alone warns and may block.
  if (impl_ && impl_->backend && backend_ == DistributedBackend::Nccl) {
    try {
      impl_->backend->shutdown();
    } catch (const std::exception&) {
      // Already failing (a rank died): nothing more to release cleanly.
    }
  }
#endif
}

namespace {

// Waits for a collective; a failure (a rank that died, a timeout) becomes an IoError that says
// which rank saw it and in which operation. NCCL's work is waited for on the GPU's stream, not
// the host (the host would stall every step): its watchdog enforces the timeout.
void finish(const c10::intrusive_ptr<c10d::Work>& work, const LaunchEnv& env,
            std::chrono::milliseconds timeout, DistributedBackend backend, const char* operation) {
  try {
    if (backend == DistributedBackend::Nccl) {
      work->wait();
    } else {
      work->wait(timeout);
    }
  } catch (const std::exception& e) {
    throw IoError("distributed: rank " + std::to_string(env.rank) + " of " +
                  std::to_string(env.world_size) + ": " + operation +
                  " failed (another rank died, hung past the " +
                  std::to_string(timeout.count() / 1000) +
                  " s timeout, or left): " + error_text(e, "distributed"));
  }
}

}  // namespace

void ProcessGroup::broadcast(const std::vector<at::Tensor>& tensors) {
  in_buckets(tensors, std::int64_t{25} << 20, [&](at::Tensor& buffer) {
    std::vector<at::Tensor> list{buffer};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    finish(impl_->backend->broadcast(list, options), env_, timeout_, backend_, "broadcast");
  });
}

void ProcessGroup::average_gradients(const std::vector<at::Tensor>& parameters,
                                     std::int64_t bucket_bytes) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  const double world = static_cast<double>(env_.world_size);
  in_buckets(grads, bucket_bytes, [&](at::Tensor& buffer) {
    std::vector<at::Tensor> list{buffer};
    finish(impl_->backend->allreduce(list), env_, timeout_, backend_, "gradient all-reduce");
    buffer.div_(world);
  });
}

std::vector<double> ProcessGroup::sum(const std::vector<double>& values) {
  if (values.empty()) return {};
  // NCCL reduces GPU tensors only: the sums travel through this rank's device.
  const bool on_device = backend_ == DistributedBackend::Nccl;
  at::Tensor sums = at::tensor(values, at::kDouble);
  std::vector<at::Tensor> list{on_device ? sums.to(device_) : sums};
  finish(impl_->backend->allreduce(list), env_, timeout_, backend_, "metric all-reduce");
  const at::Tensor result = on_device ? list.front().cpu() : list.front();
  const double* data = result.data_ptr<double>();
  return std::vector<double>(data, data + values.size());
}

void ProcessGroup::barrier() {
  finish(impl_->backend->barrier(), env_, timeout_, backend_, "barrier");
}

}  // namespace tft::distributed
