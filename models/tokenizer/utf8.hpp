// UTF-8 decoding and encoding for the tokenizer, with invalid input handled as Unicode's
// "maximal subpart" practice prescribes (what Rust's String::from_utf8_lossy, and so Hugging Face
// tokenizers, does): each maximal invalid subsequence becomes one U+FFFD.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dicebench::models::utf8 {

struct Step {
  char32_t code_point = 0;  // U+FFFD where invalid
  size_t length = 1;        // bytes consumed: the sequence, or the maximal invalid subpart (>= 1)
  bool valid = false;
};

// The code point starting at text[pos] (pos < text.size()).
Step next(std::string_view text, size_t pos);

void append(std::string& out, char32_t code_point);

bool is_valid(std::string_view text);

// `bytes` with every maximal invalid subsequence replaced by U+FFFD.
std::string to_valid(std::string_view bytes);

}  // namespace dicebench::models::utf8
