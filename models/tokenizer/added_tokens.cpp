// Finding added tokens in text (see added_tokens.hpp).
#include "models/tokenizer/added_tokens.hpp"

#include "models/tokenizer/utf8.hpp"

#include <algorithm>

namespace dicebench::models {
namespace {

// Unicode White_Space, what Hugging Face's \s strips around lstrip / rstrip tokens.
bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// Start of the run of whitespace that ends `text`.
size_t trailing_space_start(std::string_view text) {
  size_t start = text.size();
  while (start > 0) {
    size_t lead = start - 1;
    while (lead > 0 && (static_cast<unsigned char>(text[lead]) & 0xC0) == 0x80) --lead;
    if (!is_white_space(utf8::next(text, lead).code_point)) break;
    start = lead;
  }
  return start;
}

// Length of the run of whitespace that starts `text`.
size_t leading_space_length(std::string_view text) {
  size_t end = 0;
  while (end < text.size()) {
    const utf8::Step step = utf8::next(text, end);
    if (!is_white_space(step.code_point)) break;
    end += step.length;
  }
  return end;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens, std::vector<std::string> patterns)
    : tokens_(std::move(tokens)), patterns_(std::move(patterns)) {
  for (uint32_t i = 0; i < patterns_.size(); ++i)
    if (!patterns_[i].empty()) by_first_byte_[static_cast<unsigned char>(patterns_[i][0])].push_back(i);
  for (auto& candidates : by_first_byte_)
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](uint32_t a, uint32_t b) { return patterns_[a].size() > patterns_[b].size(); });
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Piece>& pieces) const {
  size_t piece_start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const std::vector<uint32_t>& candidates = by_first_byte_[static_cast<unsigned char>(text[pos])];
    const auto found = std::find_if(candidates.begin(), candidates.end(),
                                    [&](uint32_t i) { return text.substr(pos).starts_with(patterns_[i]); });
    if (found == candidates.end()) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[*found];
    size_t start = pos, stop = pos + patterns_[*found].size();
    if (token.lstrip) start = std::max(trailing_space_start(text.substr(0, start)), piece_start);
    if (token.rstrip) stop += leading_space_length(text.substr(stop));
    pos = stop;  // the search goes on after the token and what it absorbed
    if (piece_start < start) pieces.push_back({text.substr(piece_start, start - piece_start), -1});
    pieces.push_back({text.substr(start, stop - start), token.id});
    piece_start = stop;
  }
  if (piece_start < text.size()) pieces.push_back({text.substr(piece_start), -1});
}

}  // namespace dicebench::models
