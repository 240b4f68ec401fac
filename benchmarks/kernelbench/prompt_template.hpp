// Internal: plain prompt templates with {{ARCH}}, {{EXAMPLE_ARCH}} and {{EXAMPLE_NEW_ARCH}},
// substituted verbatim by file contents (no other processing).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "benchmarks/kernelbench/prompts.hpp"
#include "core/base/result.hpp"

namespace dicebench::kernelbench::detail {

struct TemplatePlan {
  // The template split at each {{ARCH}}, with the example placeholders already replaced: the
  // prompt is pieces[0] + source + pieces[1] + source + ... + pieces.back().
  std::vector<std::string> pieces;
  std::vector<PromptFile> files;  // the template, then the example files it uses
  int example_count = 0;
};

// Reads `template_file` and, when it uses them, the example files (empty paths mean
// model_ex_add.py / model_new_ex_add.py beside the template). A placeholder is "{{" NAME "}}"
// with NAME made of letters, digits and '_' (not starting with a digit); any other braces are
// text. Errors: an unknown placeholder (naming it, the file and the line), no {{ARCH}}, an
// unreadable file.
Result<TemplatePlan> plan_template_prompt(const std::filesystem::path& template_file,
                                          const std::filesystem::path& example_arch,
                                          const std::filesystem::path& example_new_arch);

}  // namespace dicebench::kernelbench::detail
