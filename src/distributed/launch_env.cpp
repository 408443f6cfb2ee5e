#include "distributed/launch_env.h"

#include "common/error.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tft::distributed {
namespace {

// A whole decimal number in [low, high]; ConfigError naming the variable otherwise.
int parse_int(const char* name, const char* text, long low, long high,
              const std::string& why = "") {
  const std::string value = text;
  char* end = nullptr;
  errno = 0;
  const long number = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || number < low || number > high) {
    throw ConfigError(std::string("environment ") + name + "=\"" + value +
                      "\": expected a whole number from " + std::to_string(low) + " to " +
                      std::to_string(high) + why);
  }
  return static_cast<int>(number);
}

}  // namespace

std::optional<LaunchEnv> launch_env_from_environment(const EnvLookup& lookup) {
  const EnvLookup get = lookup ? lookup : [](const char* name) { return std::getenv(name); };
  const char* world = get("WORLD_SIZE");
  if (world == nullptr) return std::nullopt;
  LaunchEnv env;
  env.world_size = parse_int("WORLD_SIZE", world, 1, std::numeric_limits<int>::max());
  const auto required = [&](const char* name) {
    const char* value = get(name);
    if (value == nullptr || *value == '\0') {
      throw ConfigError(std::string("environment: WORLD_SIZE=") + world + " is set but " + name +
                        " is not (torchrun sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT "
                        "together)");
    }
    return value;
  };
  const int last = env.world_size - 1;
  const std::string below_world = " (below WORLD_SIZE=" + std::to_string(env.world_size) + ")";
  env.rank = parse_int("RANK", required("RANK"), 0, last, below_world);
  const char* local = get("LOCAL_RANK");
  env.local_rank = local == nullptr ? 0 : parse_int("LOCAL_RANK", local, 0, last, below_world);
  env.master_addr = required("MASTER_ADDR");
  env.master_port = parse_int("MASTER_PORT", required("MASTER_PORT"), 1, 65535);
  const char* agent = get("TORCHELASTIC_USE_AGENT_STORE");
  env.agent_store = agent != nullptr && std::string(agent) == "True";
  return env;
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool ok = fd >= 0 &&
                  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) throw IoError(std::string("no free TCP port on 127.0.0.1: ") + std::strerror(error));
  return ntohs(address.sin_port);
}

}  // namespace tft::distributed
