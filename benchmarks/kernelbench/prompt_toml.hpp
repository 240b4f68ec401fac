// Internal: composes a prompt from KernelBench's prompts.toml the way KernelBench does, up to the
// final per-problem str.format. Its .cpp includes toml++ (as core/host/config.cpp and results/report/gate_rules.cpp
// do).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "benchmarks/kernelbench/prompts.hpp"
#include "benchmarks/kernelbench/pytext.hpp"
#include "core/base/result.hpp"

namespace dicebench::kernelbench::detail {

struct TomlPlan {
  std::string option, backend, precision;  // as resolved (style and backend lower-cased)
  std::string format_text;                 // prompt_text before .format(**context)
  FormatContext context;                   // the context, less ref_arch_src
  std::vector<PromptFile> files;           // prompts.toml first, then the example files
  int example_count = 0;
};

// Finds prompts.toml: `prompts_dir` (a folder or the file) when given, else under levels_root
// (see PromptOptions). The error lists every place looked at.
Result<std::filesystem::path> find_prompts_toml(const std::filesystem::path& prompts_dir,
                                                const std::filesystem::path& levels_root);

// Loads `prompts_toml` and composes option/backend/precision. A relative example path in the file
// is tried against the KernelBench checkout roots (derived from the prompts folder and
// levels_root), then against the prompts folder: with its src/kernelbench/prompts/ (or
// src/prompts/) prefix removed, so that example files may sit beside prompts.toml; a path
// without that prefix is tried as it is and by base name.
Result<TomlPlan> plan_toml_prompt(const std::filesystem::path& prompts_toml, const std::filesystem::path& levels_root,
                                  const std::string& option, const std::string& backend, const std::string& precision);

}  // namespace dicebench::kernelbench::detail
