// Added tokens (special ones such as <|im_end|> and plain ones such as <think>): found in text
// before pre-tokenization, leftmost first and longest among those starting at one place, as
// Hugging Face's added vocabulary does, with its lstrip / rstrip whitespace absorption.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::models {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;     // dropped by decode(skip_special_tokens)
  bool lstrip = false;      // absorbs the whitespace before it
  bool rstrip = false;      // absorbs the whitespace after it
  bool normalized = false;  // matched in the normalized text rather than the raw text
};

class AddedTokenMatcher {
 public:
  struct Piece {
    std::string_view text;
    int32_t token_id = -1;  // -1: plain text for the pre-tokenizer
  };

  AddedTokenMatcher() = default;
  // `patterns[i]` is what to look for (the content, normalized where the token is) for tokens[i].
  AddedTokenMatcher(std::vector<AddedToken> tokens, std::vector<std::string> patterns);

  bool empty() const { return tokens_.empty(); }
  // Appends pieces covering `text` in order: tokens found and the plain text between them.
  void split(std::string_view text, std::vector<Piece>& pieces) const;

 private:
  std::vector<AddedToken> tokens_;
  std::vector<std::string> patterns_;
  std::array<std::vector<uint32_t>, 256> by_first_byte_;  // indices, longest pattern first
};

}  // namespace dicebench::models
