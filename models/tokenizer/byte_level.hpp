// The byte-level alphabet of GPT-2-style BPE: each of the 256 byte values is written as one
// printable character in tokenizer.json's vocabulary and merges (space is "Ġ", newline "Ċ").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dicebench::models::byte_level {

// The bytes a token's byte-level text stands for; nullopt when it holds a character outside the
// alphabet (such tokens, e.g. added ones, stand for their own UTF-8 text).
std::optional<std::string> to_bytes(std::string_view token_text);

// The byte-level text of raw bytes.
std::string from_bytes(std::string_view bytes);

}  // namespace dicebench::models::byte_level
