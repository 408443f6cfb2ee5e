// Files for tests: a fresh scratch folder per test and process, whole files written and read as
// text, and the paths ctest passes in the environment.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace tft::testing {

// A fresh scratch folder under the system's temp folder, named after the test and the pid.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tft_train_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A path ctest gives the test in environment variable `name` (tft_test_path in
// tests/CMakeLists.txt): the checkout's and the build folder's paths come at run time, not as
// compile definitions, so that no object file holds them and ccache hits across checkouts.
inline std::filesystem::path path_from_environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    throw std::runtime_error(std::string(name) + " is not set: run this test through ctest");
  }
  return value;
}

// The tft-train executable of this build, for the tests that run it (tft_add_runner_test).
inline std::string tft_train_executable() {
  return path_from_environment("TFT_TRAIN_EXECUTABLE").string();
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace tft::testing
