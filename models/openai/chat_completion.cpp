// Writing chat-completion requests and reading their replies.
#include "models/openai/chat_completion.hpp"

namespace dicebench::openai {

std::string quote_start(std::string_view text, size_t limit) {
  std::string out;
  for (const char c : text.substr(0, limit)) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  // Valid UTF-8 is not guaranteed at the cut; nlohmann's dump replaces what is broken.
  return "'" + out + (text.size() > limit ? "...'" : "'");
}

std::string request_body(const Settings& settings, std::string_view prompt, uint64_t sample_seed) {
  nlohmann::ordered_json body = {{"model", settings.model},
                                 {"messages", nlohmann::ordered_json::array({{{"role", "user"}, {"content", prompt}}})}};
  for (const auto& [key, value] : settings.sampling.items()) body[key] = value;
  if (std::holds_alternative<SampleSeed>(settings.seed)) body["seed"] = sample_seed;
  else if (std::holds_alternative<long long>(settings.seed)) body["seed"] = std::get<long long>(settings.seed);
  for (const auto& [key, value] : settings.extra_body.items()) body[key] = value;
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string with_n(const std::string& body, size_t n) {
  if (n <= 1) return body;
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(body);
  json["n"] = n;
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
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
  return quote_start(body);
}

}  // namespace dicebench::openai
