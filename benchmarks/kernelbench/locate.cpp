// Finds the folder that holds KernelBench's level folders.
#include "benchmarks/kernelbench/locate.hpp"

#include <array>
#include <cstdlib>
#include <exception>

namespace dicebench::kernelbench {

const char* const kHowToGetKernelBench =
    "get KernelBench with `git clone https://github.com/ScalingIntelligence/KernelBench` and pass "
    "its path with --kernelbench-root, kernelbench.root in the config, or DICEBENCH_KERNELBENCH_ROOT";

namespace {

namespace fs = std::filesystem;

// True when `dir` holds at least one of level1 ... level4 as a folder.
bool holds_levels(const fs::path& dir) {
  for (int level = 1; level <= 4; ++level) {
    std::error_code ec;
    if (fs::is_directory(dir / ("level" + std::to_string(level)), ec)) return true;
  }
  return false;
}

fs::path absolute_clean(const fs::path& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(p, ec);
  if (ec) out = fs::absolute(p, ec).lexically_normal();
  return out;
}

}  // namespace

Result<std::filesystem::path> locate_levels_root(std::string given) {
  try {
    if (given.empty()) {
      return make_error(std::string("no KernelBench root was given; ") + kHowToGetKernelBench);
    }
    if (given == "~" || given.rfind("~/", 0) == 0) {
      if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        given = std::string(home) + given.substr(1);
      }
    }
    const fs::path root = absolute_clean(fs::path(given));
    const std::array<fs::path, 2> candidates = {root / "KernelBench", root};
    for (const fs::path& candidate : candidates) {
      if (holds_levels(candidate)) return candidate;
    }
    std::error_code ec;
    const std::string what = !fs::exists(root, ec)         ? "does not exist"
                             : !fs::is_directory(root, ec) ? "is a file, not a folder"
                                                           : "holds no KernelBench problems";
    return make_error("KernelBench root " + root.string() + " " + what + " (looked for level1/ ... level4/ in " +
                      candidates[0].string() + " and in " + candidates[1].string() + "); " + kHowToGetKernelBench);
  } catch (const std::exception& e) {
    return make_error("cannot locate KernelBench under '" + given + "': " + e.what());
  }
}

}  // namespace dicebench::kernelbench
