// Turning generated ids into the answer text.
#include "models/local/answer_text.hpp"

#include <algorithm>

namespace dicebench::local {

Answer answer_text(const models::Tokenizer& tokenizer, std::span<const int64_t> tokens,
                   const std::vector<int64_t>& end_of_turn) {
  Answer answer;
  const auto end = std::find_if(tokens.begin(), tokens.end(), [&](int64_t id) {
    return std::find(end_of_turn.begin(), end_of_turn.end(), id) != end_of_turn.end();
  });
  answer.ended_turn = end != tokens.end();
  answer.answer_tokens = static_cast<size_t>(end - tokens.begin());
  const std::vector<int32_t> ids(tokens.begin(), end);
  answer.text = tokenizer.decode(ids, /*skip_special_tokens=*/true);
  constexpr std::string_view kThinkEnd = "</think>";
  if (const size_t at = answer.text.rfind(kThinkEnd); at != std::string::npos) {
    answer.thinking_bytes = at + kThinkEnd.size();
    answer.text.erase(0, answer.thinking_bytes);
  }
  return answer;
}

}  // namespace dicebench::local
