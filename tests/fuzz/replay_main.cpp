// A main() for the fuzz harnesses in builds without libFuzzer (the normal gcc build): it feeds
// every file named on the command line, or found directly inside a folder named there, to
// LLVMFuzzerTestOneInput once, as `fuzzer -runs=0 FILES...` would. ctest runs it over each
// target's seed corpus, so the harnesses compile and their seeds pass in every build.
//
// A harness reports a finding by crashing (abort, an uncaught exception), which fails the
// test. Naming no readable input at all is a failure too: a misspelt corpus folder must not
// pass by replaying nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Optional in a harness, as with libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_named_by(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (!fs::is_directory(arg)) {
      inputs.push_back(arg);
      continue;
    }
    std::vector<fs::path> entries;
    for (const auto& entry : fs::directory_iterator(arg)) {
      if (entry.is_regular_file()) entries.push_back(entry.path());
    }
    std::sort(entries.begin(), entries.end());  // the same order on every run
    inputs.insert(inputs.end(), entries.begin(), entries.end());
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  const std::vector<fs::path> inputs = inputs_named_by(argc, argv);
  if (inputs.empty()) {
    std::fprintf(stderr, "%s: no inputs (usage: %s FILE_OR_FOLDER...)\n", argv[0], argv[0]);
    return 1;
  }
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], path.c_str());
      return 1;
    }
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%s: replayed %zu inputs\n", argv[0], inputs.size());
  return 0;
}
