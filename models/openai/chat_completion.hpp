// The OpenAI chat-completions wire format: the request body for one prompt, and reading a reply
// (a completion, or one line saying why the reply is not one).
#pragma once

#include "models/openai/openai_settings.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace dicebench::openai {

// The JSON body of POST {base_url}/chat/completions for `prompt`: the model, one user message, the
// sampling settings, the seed (`sample_seed` unless the settings fix or drop it), then extra_body
// merged on top.
std::string request_body(const Settings& settings, std::string_view prompt, uint64_t sample_seed);

struct ChatAnswer {
  std::string completion;
  std::string finish_reason;           // empty when the server gave none
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
};

// The body asking for `n` completions of the same request (n > 1 adds "n").
std::string with_n(const std::string& body, size_t n);

// Choice `choice` of a reply body read as a chat completion, or one line saying why it is not
// one, quoting its start.
std::variant<ChatAnswer, std::string> read_reply(std::string_view body, size_t choice = 0);

// How many choices a chat-completion reply holds (0 for anything else).
size_t choice_count(std::string_view body);

// The message of an error reply ({"error": {"message": ...}}, or the start of the body).
std::string error_message(std::string_view body);

// The first `limit` bytes of `text` on one line, for quoting a reply in an error.
std::string quote_start(std::string_view text, size_t limit = 200);

}  // namespace dicebench::openai
