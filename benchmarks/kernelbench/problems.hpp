// KernelBench problems: the `<id>_<Name>.py` files of one level folder, with content hashes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::kernelbench {

struct Problem {
  std::int64_t id = 0;  // the integer before the first '_' of the file name
  int level = 0;
  std::string name;            // the file name between that '_' and ".py"
  std::filesystem::path path;  // absolute path of the problem file
  std::string source;          // the file's bytes, unchanged
  std::string content_hash;    // "sha256:<64 hex digits>" of `source`
};

// The problems in <levels_root>/level<level>/, sorted by id. Only regular files named
// `<digits>_<Name>.py` count; everything else is ignored. Errors (one line each): the level folder
// missing ("no level4 folder under X"), two files with the same id (naming both), a file that
// cannot be read (naming it).
Result<std::vector<Problem>> load_level(const std::filesystem::path& levels_root, int level);

}  // namespace dicebench::kernelbench
