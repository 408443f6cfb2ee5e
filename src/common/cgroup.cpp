#include "common/cgroup.h"

#include <fstream>
#include <sstream>

namespace tft::cgroup {

namespace fs = std::filesystem;

namespace {

fs::path without_trailing_separator(fs::path path) {
  return path.has_filename() || !path.has_parent_path() ? path : path.parent_path();
}

}  // namespace

Membership membership(const fs::path& proc_root) {
  Membership groups;
  std::ifstream in(proc_root / "self" / "cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (id == "0" && controllers.empty()) {
      groups.v2 = path;
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ',')) groups.v1[name] = path;
  }
  return groups;
}

std::vector<fs::path> levels(const fs::path& mount, const std::string& group) {
  std::vector<fs::path> result;
  const fs::path top = without_trailing_separator(mount.lexically_normal());
  fs::path level =
      without_trailing_separator((top / fs::path(group).relative_path()).lexically_normal());
  while (true) {
    result.push_back(level);
    // Up to the mount and no further: above it is another hierarchy, or none.
    if (level == top || level.string().size() <= top.string().size()) break;
    level = level.parent_path();
  }
  return result;
}

std::optional<std::string> first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

}  // namespace tft::cgroup
