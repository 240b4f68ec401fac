// Names of the files a replay folder holds, parsed and formatted: KernelBench's runs layout
// (level_{L}_problem_{P}_sample_{S}_kernel.py, already the extracted candidate) and raw model
// output (level_{L}_problem_{P}_sample_{S}.txt, extracted by the suite).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dicebench::replay {

// The sample a file stores.
struct SampleKey {
  int32_t level = 0;
  int64_t problem_id = 0;
  int32_t sample_index = 0;
  auto operator<=>(const SampleKey&) const = default;
};

enum class FileKind {
  kernel,      // level_L_problem_P_sample_S_kernel.py: the candidate program itself
  completion,  // level_L_problem_P_sample_S.txt: a raw completion
};

struct ParsedFileName {
  SampleKey key;
  FileKind kind = FileKind::kernel;
};

// The sample a file name stands for; nullopt for any other name (a KernelBench
// "..._prompt.txt", a README, numbers out of range).
std::optional<ParsedFileName> parse_file_name(std::string_view name);

// The file name that stores `key` as `kind`.
std::string file_name(const SampleKey& key, FileKind kind);

// "level 1 problem 3 sample 2", for messages.
std::string describe(const SampleKey& key);

// The accepted names, for messages: "level_<L>_problem_<P>_sample_<S>_kernel.py or ...".
inline constexpr std::string_view kExpectedNames =
    "level_<L>_problem_<P>_sample_<S>_kernel.py (KernelBench runs layout) or "
    "level_<L>_problem_<P>_sample_<S>.txt (raw completions)";

}  // namespace dicebench::replay
