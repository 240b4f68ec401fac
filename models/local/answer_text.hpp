// From generated token ids to the completion a suite reads: cut at the first end-of-turn token
// (the paper preset generates past it, having no stop tokens), decoded without special tokens,
// and for a model that thought first, only the text after its last </think>.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/tokenizer/tokenizer.hpp"

namespace dicebench::local {

struct Answer {
  std::string text;
  size_t answer_tokens = 0;   // tokens before the end of the turn
  size_t thinking_bytes = 0;  // text dropped before the last </think>
  bool ended_turn = false;    // an end-of-turn token ended the answer
};

Answer answer_text(const models::Tokenizer& tokenizer, std::span<const int64_t> tokens,
                   const std::vector<int64_t>& end_of_turn);

}  // namespace dicebench::local
