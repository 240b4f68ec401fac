// The OpenAI chat-completions wire format: the request body for one prompt, and reading a reply
// (a completion, or one line saying why the reply is not one).
#pragma once

#include "models/openai/openai_settings.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace dicebench::openai {

// The JSON body of POST {base_url}/chat/completions for `prompt`: the model, one user message, the
// sampling settings, the seed (`sample_seed` unless the settings fix or drop it), then extra_body
// merged on top.
std::string request_body(const Settings& settings, std::string_view prompt, uint64_t sample_seed);

struct ChatAnswer {
  std::string completion;
  std::string finish_reason;  // empty when the server gave none
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;  // this choice's own (see usage_split)
  // How completion_tokens came from a reply of several choices, whose usage covers them all (vLLM,
  // OpenAI): "per_choice" from the choice's own count (its "usage", or its logprobs' tokens),
  // "even" the reply's completion tokens divided among its choices (the remainder to the first
  // ones, so that the choices add up to the reply's usage); empty for a reply of one choice.
  std::string usage_split;
  size_t choices = 1;  // how many choices the reply held
};

// The body asking for `n` completions of the same request (n > 1 adds "n").
std::string with_n(const std::string& body, size_t n);

// The body as sent: with "n" (n > 1) and, when `stream`, "stream": true with
// "stream_options": {"include_usage": true} (the last event carries the usage). The request cache
// keys the body without these: neither changes what a sample's answer is.
std::string for_sending(const std::string& body, size_t n, bool stream);

// Choice `choice` of a reply body read as a chat completion, or one line saying why it is not
// one, quoting its start.
std::variant<ChatAnswer, std::string> read_reply(std::string_view body, size_t choice = 0);

// What GET {base_url}/models lists: the served models' ids and, where the server says
// (vLLM's "max_model_len"), each one's context length. nullopt for a body that is no model list.
struct ServedModels {
  std::vector<std::string> ids;
  std::map<std::string, int64_t> max_model_len;
};
std::optional<ServedModels> read_model_list(std::string_view body);

// Whether a chat-completion reply holds a choice the server aborted (finish_reason "abort": vLLM
// ends the requests in flight so when it shuts down): a cut reply, not the model's answer.
bool has_aborted_choice(std::string_view body);

// How many choices a chat-completion reply holds (0 for anything else).
size_t choice_count(std::string_view body);

// The message of an error reply ({"error": {"message": ...}}, {"error": "..."}, {"message": ...},
// FastAPI's {"detail": ...}), or the start of the body.
std::string error_message(std::string_view body);

// The first `limit` bytes of `text` on one line, for quoting a reply in an error.
std::string quote_start(std::string_view text, size_t limit = 200);

}  // namespace dicebench::openai
