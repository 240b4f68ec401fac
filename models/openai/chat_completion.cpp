// Writing chat-completion requests and reading their replies.
#include "models/openai/chat_completion.hpp"

#include <algorithm>

namespace dicebench::openai {

std::string quote_start(std::string_view text, size_t limit) {
  std::string out;
  for (const char c : text.substr(0, limit)) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  // Valid UTF-8 is not guaranteed at the cut; nlohmann's dump replaces what is broken.
  return "'" + out + (text.size() > limit ? "...'" : "'");
}

std::string request_body(const Settings& settings, std::string_view prompt, uint64_t sample_seed) {
  nlohmann::ordered_json body = {
      {"model", settings.model},
      {"messages", nlohmann::ordered_json::array({{{"role", "user"}, {"content", prompt}}})}};
  for (const auto& [key, value] : settings.sampling.items()) body[key] = value;
  if (std::holds_alternative<SampleSeed>(settings.seed))
    body["seed"] = sample_seed;
  else if (std::holds_alternative<long long>(settings.seed))
    body["seed"] = std::get<long long>(settings.seed);
  for (const auto& [key, value] : settings.extra_body.items()) body[key] = value;
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string with_n(const std::string& body, size_t n) {
  if (n <= 1) return body;
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(body);
  json["n"] = n;
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string for_sending(const std::string& body, size_t n, bool stream) {
  if (n <= 1 && !stream) return body;
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(body);
  if (n > 1) json["n"] = n;
  if (stream) {
    json["stream"] = true;
    json["stream_options"] = {{"include_usage", true}};
  }
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::optional<ServedModels> read_model_list(std::string_view body) {
  const nlohmann::json listing = nlohmann::json::parse(body, nullptr, false);
  if (!listing.is_object() || !listing.contains("data") || !listing["data"].is_array()) return std::nullopt;
  ServedModels served;
  for (const auto& entry : listing["data"]) {
    if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string()) continue;
    const std::string id = entry["id"].get<std::string>();
    served.ids.push_back(id);
    if (entry.contains("max_model_len") && entry["max_model_len"].is_number_integer())
      served.max_model_len[id] = entry["max_model_len"].get<int64_t>();
  }
  return served;
}

namespace {

// A choice's own completion tokens, where the reply gives them: its "usage", or the tokens of its
// logprobs (one entry a token, when the request asked for logprobs).
std::optional<int64_t> own_completion_tokens(const nlohmann::json& choice) {
  if (choice.contains("usage") && choice["usage"].is_object() && choice["usage"].contains("completion_tokens") &&
      choice["usage"]["completion_tokens"].is_number_integer())
    return choice["usage"]["completion_tokens"].get<int64_t>();
  if (choice.contains("logprobs") && choice["logprobs"].is_object() && choice["logprobs"].contains("content") &&
      choice["logprobs"]["content"].is_array())
    return static_cast<int64_t>(choice["logprobs"]["content"].size());
  return std::nullopt;
}

}  // namespace

bool has_aborted_choice(std::string_view body) {
  const nlohmann::json reply = nlohmann::json::parse(body, nullptr, false);
  if (!reply.is_object() || !reply.contains("choices") || !reply["choices"].is_array()) return false;
  for (const auto& choice : reply["choices"])
    if (choice.is_object() && choice.value("finish_reason", nlohmann::json()) == "abort") return true;
  return false;
}

size_t choice_count(std::string_view body) {
  const nlohmann::json reply = nlohmann::json::parse(body, nullptr, false);
  if (!reply.is_object() || !reply.contains("choices") || !reply["choices"].is_array()) return 0;
  return reply["choices"].size();
}

std::variant<ChatAnswer, std::string> read_reply(std::string_view body, size_t choice_index) {
  const nlohmann::json reply = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) return "the server's reply is not JSON: " + quote_start(body);
  const auto not_completion = [&] { return "the server's reply is not a chat completion: " + quote_start(body); };
  if (!reply.is_object() || !reply.contains("choices") || !reply["choices"].is_array() ||
      reply["choices"].size() <= choice_index)
    return not_completion();
  const nlohmann::json& choice = reply["choices"][choice_index];
  if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object()) return not_completion();
  const nlohmann::json& content = choice["message"].value("content", nlohmann::json());
  if (!content.is_string() && !content.is_null()) return not_completion();
  ChatAnswer answer;
  answer.completion = content.is_string() ? content.get<std::string>() : "";
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
    answer.finish_reason = choice["finish_reason"].get<std::string>();
  if (reply.contains("usage") && reply["usage"].is_object()) {
    const nlohmann::json& usage = reply["usage"];
    if (usage.contains("prompt_tokens") && usage["prompt_tokens"].is_number_integer())
      answer.prompt_tokens = usage["prompt_tokens"].get<int64_t>();
    if (usage.contains("completion_tokens") && usage["completion_tokens"].is_number_integer())
      answer.completion_tokens = usage["completion_tokens"].get<int64_t>();
  }
  // One usage covers every choice of the reply: each sample gets its own choice's share.
  const nlohmann::json& choices = reply["choices"];
  answer.choices = choices.size();
  if (answer.choices > 1) {
    if (const auto own = own_completion_tokens(choice)) {
      answer.completion_tokens = own;
      answer.usage_split = "per_choice";
    } else if (answer.completion_tokens) {
      // What the choices without a count of their own share evenly: the reply's completion tokens
      // less those of the choices that have one; the remainder goes to the first of them.
      int64_t rest = *answer.completion_tokens;
      int64_t sharing = 0, before = 0;
      for (size_t j = 0; j < choices.size(); ++j) {
        if (const auto counted = choices[j].is_object() ? own_completion_tokens(choices[j]) : std::nullopt) {
          rest -= *counted;
        } else {
          if (j < choice_index) ++before;
          ++sharing;
        }
      }
      rest = std::max<int64_t>(rest, 0);
      answer.completion_tokens = rest / sharing + (before < rest % sharing ? 1 : 0);
      answer.usage_split = "even";
    }
  }
  return answer;
}

std::string error_message(std::string_view body) {
  const nlohmann::json reply = nlohmann::json::parse(body, nullptr, false);
  if (reply.is_object() && reply.contains("error")) {
    const nlohmann::json& error = reply["error"];
    if (error.is_object() && error.contains("message") && error["message"].is_string())
      return quote_start(error["message"].get<std::string>(), 300);
    if (error.is_string()) return quote_start(error.get<std::string>(), 300);
  }
  if (reply.is_object() && reply.contains("message") && reply["message"].is_string())
    return quote_start(reply["message"].get<std::string>(), 300);
  if (reply.is_object() && reply.contains("detail") && reply["detail"].is_string())
    return quote_start(reply["detail"].get<std::string>(), 300);
  return quote_start(body);
}

}  // namespace dicebench::openai
