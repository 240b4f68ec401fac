// The response in an OpenRLHF query (include/dicebench/openrlhf.hpp).
#include "dicebench/openrlhf.hpp"

#include <array>
#include <optional>

namespace dicebench {
namespace {

constexpr std::array<std::size_t, 3> kTails = {64, 32, 16};  // bytes of the prompt's end looked for
constexpr std::size_t kSlack = 16;                           // bytes decoding may add before the prompt's end
constexpr std::size_t kTokenName = 64;                       // characters a special token's name has at most
constexpr std::string_view kFullwidthBar = "\xef\xbd\x9c";   // U+FF5C, DeepSeek's <｜...｜> tokens

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Where the special token that ends text[0, end) starts; none where it ends in none.
std::optional<std::size_t> token_start(std::string_view text, std::size_t end) {
  const std::string_view head = text.substr(0, end);
  for (const std::string_view literal : {"</s>", "<eos>", "<end_of_turn>"})
    if (head.ends_with(literal)) return end - literal.size();
  if (head.ends_with("|>")) {  // <|name|>: a name without <, >, | or white space
    std::size_t at = end - 2, name = 0;
    while (at > 0 && name <= kTokenName) {
      const char c = head[at - 1];
      if (c == '|') break;
      if (c == '<' || c == '>' || is_space(c)) return std::nullopt;
      --at;
      ++name;
    }
    if (name >= 1 && name <= kTokenName && at >= 2 && head.substr(at - 2, 2) == "<|") return at - 2;
    return std::nullopt;
  }
  const std::string closing = std::string(kFullwidthBar) + ">";
  if (head.ends_with(closing)) {  // <｜name｜>: a name without <, > or ｜ (characters, not bytes)
    std::size_t at = end - closing.size(), name = 0;
    while (at > 0) {
      if (head.substr(0, at).ends_with(kFullwidthBar)) break;
      const char c = head[at - 1];
      if (c == '<' || c == '>') return std::nullopt;
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++name;  // a character's first byte
      --at;
    }
    const std::size_t bar = kFullwidthBar.size();
    if (name >= 1 && name <= kTokenName && at >= bar + 1 && head[at - bar - 1] == '<') return at - bar - 1;
  }
  return std::nullopt;
}

std::string without_trailing_tokens(std::string_view text) {
  std::size_t end = text.size(), kept = text.size();
  while (true) {
    std::size_t at = end;
    while (at > 0 && is_space(text[at - 1])) --at;
    const auto start = token_start(text, at);
    if (!start) break;
    end = *start;
    kept = end;
  }
  if (kept < text.size())  // the white space before the first token goes with it
    while (kept > 0 && is_space(text[kept - 1])) --kept;
  return std::string(text.substr(0, kept));
}

}  // namespace

OpenRlhfResponse openrlhf_response(std::string_view query, std::string_view prompt) {
  if (prompt.empty() || query.starts_with(prompt)) {
    return {without_trailing_tokens(query.substr(prompt.size())), true};
  }
  const std::size_t window = prompt.size() + kSlack;  // where the prompt's end may lie
  for (const std::size_t size : kTails) {
    const std::string_view tail = prompt.substr(prompt.size() > size ? prompt.size() - size : 0);
    if (tail.size() > window) continue;
    const std::size_t last_start = std::min(query.size(), window) >= tail.size()
                                       ? std::min(query.size(), window) - tail.size()
                                       : std::string_view::npos;
    if (last_start == std::string_view::npos) continue;
    const std::size_t at = query.rfind(tail, last_start);
    if (at != std::string_view::npos) return {without_trailing_tokens(query.substr(at + tail.size())), true};
  }
  return {without_trailing_tokens(query), false};
}

}  // namespace dicebench
