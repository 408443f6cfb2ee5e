// The registry of live handles behind live() / publish() / destroy() (api_guard.h).
#include "api_guard.h"

#include <mutex>
#include <unordered_map>

namespace tft::capi {
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<const void*, std::uint64_t> handles;  // address -> type magic
};

// Never destroyed: handles may be freed from static destructors of the host after ours ran.
Registry& registry() {
  static Registry* instance = new Registry;
  return *instance;
}

}  // namespace

void register_handle(const void* handle, std::uint64_t magic) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.handles[handle] = magic;
}

bool unregister_handle(const void* handle, std::uint64_t magic) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.handles.find(handle);
  if (it == r.handles.end() || it->second != magic) return false;
  r.handles.erase(it);
  return true;
}

bool is_live_handle(const void* handle, std::uint64_t magic) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.handles.find(handle);
  return it != r.handles.end() && it->second == magic;
}

bool with_live_handle(const void* handle, std::uint64_t magic, void (*action)(const void*)) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.handles.find(handle);
  if (it == r.handles.end() || it->second != magic) return false;
  action(handle);
  return true;
}

}  // namespace tft::capi
