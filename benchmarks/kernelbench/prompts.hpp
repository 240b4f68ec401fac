// Prompt construction for KernelBench problems, from prompt files only (never from text in our
// sources): KernelBench's prompts.toml (styles zero_shot, one_shot, few_shot) or a plain template
// with {{ARCH}}, {{EXAMPLE_ARCH}} and {{EXAMPLE_NEW_ARCH}} (style "template").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "benchmarks/kernelbench/problems.hpp"
#include "benchmarks/kernelbench/pytext.hpp"
#include "core/base/result.hpp"

namespace dicebench::kernelbench {

struct PromptOptions {
  std::string style = "one_shot";  // zero_shot | one_shot | few_shot (from prompts.toml) | template
  std::string backend = "cuda";    // a [backends.X] table of prompts.toml
  std::string precision = "fp32";  // a [precision.X] table of prompts.toml
  // Folder holding prompts.toml (or the prompts.toml file itself). Empty: look in
  // <levels_root>/../src/kernelbench/prompts, <levels_root>/src/kernelbench/prompts, <levels_root>/prompts.
  std::filesystem::path prompts_dir;
  // Style "template": the template file (required), and the example pair it embeds; empty
  // example paths mean model_ex_add.py / model_new_ex_add.py beside the template.
  std::filesystem::path template_file;
  std::filesystem::path example_arch, example_new_arch;
};

// A file a prompt is built from, with the SHA-256 of its bytes.
struct PromptFile {
  std::string role;  // "prompts_toml", "template", "example_arch", "example_new_arch", "few_shot_2_input", ...
  std::filesystem::path path;
  std::string sha256;
};

class PromptBuilder {
 public:
  // Reads and checks every prompt file up front; errors are one line naming the file (malformed
  // TOML as "FILE:LINE:COLUMN: message") and list the valid choices for an unknown style, backend
  // or precision.
  static Result<PromptBuilder> create(const PromptOptions& options, const std::filesystem::path& levels_root);

  // The prompt for one problem (a single user message).
  Result<std::string> build(const Problem& problem) const;

  // The resolved settings as a JSON object: style, backend, precision, the files used with their
  // sha256, and the number of example pairs.
  std::string describe() const;

  const std::string& style() const { return style_; }
  const std::vector<PromptFile>& files() const { return files_; }

 private:
  PromptBuilder() = default;

  std::string style_, backend_, precision_;
  bool from_template_ = false;
  int example_count_ = 0;
  std::vector<PromptFile> files_;
  // Style from prompts.toml: the composed text before KernelBench's final str.format(**context),
  // and that context without ref_arch_src (the only per-problem value).
  std::string format_text_;
  FormatContext context_;
  // Style "template": the template split at {{ARCH}}, example files already substituted.
  std::vector<std::string> pieces_;
};

}  // namespace dicebench::kernelbench
