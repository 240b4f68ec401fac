// The fill-in-the-middle chat prompt, as README.md "Kernel infilling" documents it.
#include "benchmarks/dice_infill/infill_prompt.hpp"

#include <fmt/format.h>

namespace dicebench::dice_infill {
namespace {

// A fenced block of `code`, its last line ended.
std::string fenced(const std::string& code) {
  return "```python\n" + code + (code.empty() || code.back() == '\n' ? "" : "\n") + "```\n";
}

}  // namespace

std::string build_fim_prompt(const InfillItem& item) {
  return fmt::format(
      "You write custom CUDA kernels to replace the PyTorch operators in the given architecture and get speedups.\n\n"
      "The architecture:\n\n{}\n"
      "A new architecture ModelNew that does the same computation with custom CUDA kernels is written below, except "
      "for one missing span of code.\n\n"
      "The code before the missing span:\n\n{}\n"
      "The code after the missing span:\n\n{}\n"
      "Write the missing span so that the code before it, your span and the code after it together form a complete, "
      "correct and fast ModelNew. Answer with the missing span only, in one ```python code block, without repeating "
      "the code before or after it.\n",
      fenced(item.pytorch_code), fenced(item.prefix), fenced(item.suffix));
}

std::string native_context_before(const InfillItem& item) {
  const std::string& reference = item.pytorch_code;
  return reference + (reference.empty() || reference.back() == '\n' ? "\n" : "\n\n") + item.prefix;
}

}  // namespace dicebench::dice_infill
