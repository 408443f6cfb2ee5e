// A process's place in a data-parallel job, read from the environment that torchrun (and any
// launcher following its conventions: Slurm through a wrapper, Kubernetes) sets for each worker.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace tft::distributed {

struct LaunchEnv {
  int rank = 0;             // RANK: this process, 0 ... world_size - 1
  int world_size = 1;       // WORLD_SIZE: processes in the job
  int local_rank = 0;       // LOCAL_RANK: this process on its machine (its GPU); default 0
  std::string master_addr;  // MASTER_ADDR: the host of rank 0, which serves the rendezvous
  int master_port = 0;      // MASTER_PORT
  // TORCHELASTIC_USE_AGENT_STORE=True: torchrun's agent already serves the store at
  // MASTER_ADDR:MASTER_PORT, so rank 0 connects to it instead of serving one itself.
  bool agent_store = false;
};

// Looks a variable up; nullptr when unset. std::getenv by default; tests pass their own.
using EnvLookup = std::function<const char*(const char*)>;

// The job this process belongs to: nullopt when WORLD_SIZE is unset (a single process, as
// without a launcher). When it is set, RANK, MASTER_ADDR and MASTER_PORT must be too, and
// every value must fit (0 <= RANK < WORLD_SIZE, 0 <= LOCAL_RANK < WORLD_SIZE, a port in
// 1..65535); ConfigError naming the variable and its value otherwise.
std::optional<LaunchEnv> launch_env_from_environment(const EnvLookup& lookup = nullptr);

// A TCP port nothing listens on at this moment (the kernel's pick for port 0 on 127.0.0.1), for
// the MASTER_PORT of a job on this machine. IoError when no socket can be had.
int free_local_port();

}  // namespace tft::distributed
