// The local engine's tokenizer: a Hugging Face byte-level BPE tokenizer.json (Qwen2 / Qwen3
// family) reproduced token for token, plus Qwen3's chat prompt. No libtorch. Const members are
// safe to call from several threads at once (encode's cache is per thread).
#pragma once

#include "core/base/result.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::models {

class Tokenizer {
 public:
  // Reads <folder>/tokenizer.json and, when present, <folder>/tokenizer_config.json. Errors name
  // the file and what in it is missing, corrupt or unsupported.
  static Result<Tokenizer> load(const std::string& folder);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Added and special tokens are split out first, then NFC (where the file asks for it), the
  // pre-tokenizer regex and BPE. Invalid UTF-8 in `text` is read as U+FFFD. No BOS/EOS is added.
  std::vector<int32_t> encode(std::string_view text) const;
  // Ids outside the vocabulary are skipped (as Hugging Face does); bytes that do not form valid
  // UTF-8 become U+FFFD.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;
  // The id of a vocabulary or added token, e.g. "<|im_end|>", "<|MASK|>".
  std::optional<int32_t> token_id(std::string_view token) const;
  // One past the largest id of the vocabulary and the added tokens.
  int32_t vocab_size() const;
  // tokenizer_config.json's eos_token, where given.
  std::optional<int32_t> eos_token_id() const;

  // Qwen3's chat template for one user message with the generation prompt; without thinking it
  // appends the empty think block, as the template does with enable_thinking=False.
  std::string chat_prompt(std::string_view user_message, bool thinking) const;

 private:
  struct State;
  explicit Tokenizer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace dicebench::models
