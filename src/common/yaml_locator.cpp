#include "common/yaml_locator.h"

namespace tft {

std::string YamlLocator::at(const YAML::Mark& mark) const {
  if (!with_lines) return "";
  if (mark.line < 0) return context.empty() ? "" : context + ": ";
  const std::string line = std::to_string(mark.line + 1);
  return context.empty() ? "line " + line + ": " : context + ":" + line + ": ";
}

}  // namespace tft
