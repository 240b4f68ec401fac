// The GPT-2 byte <-> character table (see byte_level.hpp).
#include "models/tokenizer/byte_level.hpp"

#include "models/tokenizer/utf8.hpp"

#include <array>
#include <unordered_map>

namespace dicebench::models::byte_level {
namespace {

// Printable bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) stand for themselves; the other 68
// take the code points from U+0100 up, in byte order.
struct Table {
  std::array<char32_t, 256> char_of_byte{};
  std::unordered_map<char32_t, unsigned char> byte_of_char;
  Table() {
    char32_t next_extra = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      char_of_byte[b] = printable ? static_cast<char32_t>(b) : next_extra++;
      byte_of_char[char_of_byte[b]] = static_cast<unsigned char>(b);
    }
  }
};

const Table& table() {
  static const Table instance;
  return instance;
}

}  // namespace

std::optional<std::string> to_bytes(std::string_view token_text) {
  const Table& t = table();
  std::string bytes;
  bytes.reserve(token_text.size());
  for (size_t pos = 0; pos < token_text.size();) {
    const utf8::Step step = utf8::next(token_text, pos);
    const auto it = t.byte_of_char.find(step.code_point);
    if (!step.valid || it == t.byte_of_char.end()) return std::nullopt;
    bytes += static_cast<char>(it->second);
    pos += step.length;
  }
  return bytes;
}

std::string from_bytes(std::string_view bytes) {
  const Table& t = table();
  std::string text;
  text.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) utf8::append(text, t.char_of_byte[b]);
  return text;
}

}  // namespace dicebench::models::byte_level
