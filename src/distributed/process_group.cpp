#include "distributed/process_group.h"

#include "common/error.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/tensor.h>
#include <c10/util/irange.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/utils.h>

#include <cstdlib>
#include <map>
#include <string>

namespace tft::distributed {

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
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

}  // namespace

ProcessGroup::ProcessGroup(const LaunchEnv& env, std::chrono::milliseconds timeout)
    : env_(env), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  const std::string who = "rank " + std::to_string(env.rank) + " of " +
                          std::to_string(env.world_size);
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
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
    gloo_options->devices.push_back(gloo_device(env.master_addr));
    impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env.rank,
                                                              env.world_size, gloo_options);
  } catch (const std::exception& e) {
    throw IoError("distributed: " + who + " could not join the job at " + env.master_addr + ":" +
                  std::to_string(env.master_port) + " within " +
                  std::to_string(timeout.count() / 1000) + " s: " + e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

namespace {

// Waits for a collective; a failure (a rank that died, a timeout) becomes an IoError that says
// which rank saw it and in which operation.
void finish(const c10::intrusive_ptr<c10d::Work>& work, const LaunchEnv& env,
            std::chrono::milliseconds timeout, const char* operation) {
  try {
    work->wait(timeout);
  } catch (const std::exception& e) {
    throw IoError("distributed: rank " + std::to_string(env.rank) + " of " +
                  std::to_string(env.world_size) + ": " + operation +
                  " failed (another rank died, hung past the " +
                  std::to_string(timeout.count() / 1000) + " s timeout, or left): " + e.what());
  }
}

}  // namespace

void ProcessGroup::broadcast(const std::vector<at::Tensor>& tensors) {
  in_buckets(tensors, std::int64_t{25} << 20, [&](at::Tensor& buffer) {
    std::vector<at::Tensor> list{buffer};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    finish(impl_->gloo->broadcast(list, options), env_, timeout_, "broadcast");
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
    finish(impl_->gloo->allreduce(list), env_, timeout_, "gradient all-reduce");
    buffer.div_(world);
  });
}

std::vector<double> ProcessGroup::sum(const std::vector<double>& values) {
  if (values.empty()) return {};
  std::vector<at::Tensor> list{at::tensor(values, at::kDouble)};
  finish(impl_->gloo->allreduce(list), env_, timeout_, "metric all-reduce");
  const double* data = list.front().data_ptr<double>();
  return std::vector<double>(data, data + values.size());
}

void ProcessGroup::barrier() { finish(impl_->gloo->barrier(), env_, timeout_, "barrier"); }

}  // namespace tft::distributed
