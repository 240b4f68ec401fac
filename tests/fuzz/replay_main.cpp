// The plain driver of a fuzz target, for builds without libFuzzer (g++): runs the target once on
// each file named, or on each file of each folder named, and says how many ran. A crash, a failed
// check or a sanitizer report ends it as it ends libFuzzer; running no file at all is a failure.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"

namespace {

int run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t ran = 0;
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    if (!std::filesystem::is_directory(path)) {
      failures += run_file(path);
      ++ran;
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path))
      if (entry.is_regular_file()) files.push_back(entry.path());
    for (const auto& file : files) {
      failures += run_file(file);
      ++ran;
    }
  }
  std::printf("%s: ran %zu inputs\n", argc > 0 ? argv[0] : "fuzz target", ran);
  if (ran == 0) {
    std::fprintf(stderr, "no input to run: name corpus files or folders\n");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
