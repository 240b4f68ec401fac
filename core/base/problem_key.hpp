// A problem's identity within a run: its level and its id within that level (KernelBench numbers
// problems per level, so a run over several levels has a problem 1 in each).
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace dicebench {

struct ProblemKey {
  int level = 0;
  std::int64_t problem_id = 0;
  auto operator<=>(const ProblemKey&) const = default;
};

// "2/5": how users name a problem of a run over several levels (`--problems 2/5`).
inline std::string problem_key_text(const ProblemKey& key) {
  return std::to_string(key.level) + "/" + std::to_string(key.problem_id);
}

}  // namespace dicebench
