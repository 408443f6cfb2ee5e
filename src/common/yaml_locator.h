// Where a YAML node is, as the prefix of a message about it: "line 3: " alone,
// "train.yaml:3: " with a context, "train.yaml: " for a node without a line. Both config
// readers (the checkpoint section's and the training config's) name places this way.
#pragma once

#include <string>

#include <yaml-cpp/mark.h>

namespace tft {

struct YamlLocator {
  std::string context;     // a file name, or "" for text without one
  bool with_lines = true;  // false: every prefix is "" (a value parsed from a --set text)
  std::string at(const YAML::Mark& mark) const;
};

}  // namespace tft
