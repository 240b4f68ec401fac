// A pre-tokenizer Split step (behavior "Isolated"): cuts text into the regex's matches and the
// text between them, each its own piece, as Hugging Face's Split does. PCRE2 with UTF and UCP
// (Unicode properties for \s, \p{L} ...), JIT-compiled where the platform allows.
#pragma once

#include "core/base/result.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::models {

class SplitRegex {
 public:
  // `literal`: the pattern is a plain string (tokenizer.json's {"String": ...}).
  static Result<SplitRegex> compile(const std::string& pattern, bool literal);

  // Appends the non-empty pieces of `text` (valid UTF-8), in order; together they are `text`.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

 private:
  struct Code;
  std::shared_ptr<const Code> code_;  // immutable once compiled, so copies may share it
};

}  // namespace dicebench::models
