#include "local_launcher.h"

#include "distributed/launch_env.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

extern char** environ;

namespace tft_train {
namespace {

// This process's environment without the variables a rank gets, plus `extra`.
std::vector<std::string> rank_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (extra.count(name) == 0) env.push_back(entry);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int exit_status(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int run_local_ranks(int nproc, const std::vector<std::string>& argv) {
  const std::string port = std::to_string(tft::distributed::free_local_port());
  // Ctrl-C reaches the ranks (one process group) and each stops at its next step; this process
  // ignores it and reports how they ended. The ranks get SIGINT's default back.
  std::signal(SIGINT, SIG_IGN);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  std::map<pid_t, int> ranks;  // running child -> its rank
  for (int rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> args = argv;
    std::vector<std::string> env = rank_environment({{"RANK", std::to_string(rank)},
                                                     {"LOCAL_RANK", std::to_string(rank)},
                                                     {"WORLD_SIZE", std::to_string(nproc)},
                                                     {"MASTER_ADDR", "127.0.0.1"},
                                                     {"MASTER_PORT", port}});
    pid_t pid = 0;
    const int error = ::posix_spawn(&pid, "/proc/self/exe", nullptr, &attributes,
                                    pointers(args).data(), pointers(env).data());
    if (error != 0) {
      posix_spawnattr_destroy(&attributes);
      for (const auto& [running, r] : ranks) ::kill(running, SIGTERM);
      throw std::runtime_error("--nproc: cannot start rank " + std::to_string(rank) + ": " +
                               std::strerror(error));
    }
    ranks[pid] = rank;
  }
  posix_spawnattr_destroy(&attributes);
  int result = 0;
  while (!ranks.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    const auto it = ranks.find(pid);
    if (it == ranks.end()) continue;
    const int code = exit_status(status);
    ranks.erase(it);
    if (code != 0 && result == 0) {
      result = code;
      // The others would fail at their next collective anyway; stop them now.
      for (const auto& [running, r] : ranks) ::kill(running, SIGTERM);
    }
  }
  return result;
}

}  // namespace tft_train
