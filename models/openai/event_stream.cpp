// Reading a streamed chat completion back into one reply body.
#include "models/openai/event_stream.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>

namespace dicebench::openai {
namespace {

using Json = nlohmann::ordered_json;

struct Choice {
  std::string role = "assistant";
  std::string content;
  std::string reasoning;
  bool has_reasoning = false;
  Json finish_reason;  // null until a chunk gives one
  Json logprobs = Json::array();
  bool has_logprobs = false;
};

struct Assembly {
  Json head = Json::object();  // id, created, model
  std::map<size_t, Choice> choices;
  Json usage;
  Json error;
  bool done = false;

  void event(std::string_view data) {
    while (!data.empty() && (data.back() == '\r' || data.back() == ' ')) data.remove_suffix(1);
    if (data == "[DONE]") {
      done = true;
      return;
    }
    const Json chunk = Json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (!chunk.is_object()) return;
    if (chunk.contains("error") && error.is_null()) error = chunk["error"];
    for (const char* key : {"id", "created", "model"})
      if (!head.contains(key) && chunk.contains(key)) head[key] = chunk[key];
    if (chunk.contains("usage") && chunk["usage"].is_object()) usage = chunk["usage"];
    if (!chunk.contains("choices") || !chunk["choices"].is_array()) return;
    for (const Json& c : chunk["choices"]) {
      if (!c.is_object()) continue;
      const size_t index = c.contains("index") && c["index"].is_number_unsigned() ? c["index"].get<size_t>() : 0;
      Choice& choice = choices[index];
      if (c.contains("delta") && c["delta"].is_object()) {
        const Json& delta = c["delta"];
        if (delta.contains("role") && delta["role"].is_string()) choice.role = delta["role"].get<std::string>();
        if (delta.contains("content") && delta["content"].is_string())
          choice.content += delta["content"].get<std::string>();
        for (const char* key : {"reasoning_content", "reasoning"})
          if (delta.contains(key) && delta[key].is_string()) {
            choice.reasoning += delta[key].get<std::string>();
            choice.has_reasoning = true;
          }
      }
      if (c.contains("finish_reason") && !c["finish_reason"].is_null()) choice.finish_reason = c["finish_reason"];
      if (c.contains("logprobs") && c["logprobs"].is_object() && c["logprobs"].contains("content") &&
          c["logprobs"]["content"].is_array()) {
        choice.has_logprobs = true;
        for (const Json& token : c["logprobs"]["content"]) choice.logprobs.push_back(token);
      }
    }
  }

  // At least one choice came, and every one that came ended with its finish_reason (no error event).
  bool finished() const {
    if (!error.is_null() || choices.empty()) return false;
    return std::all_of(choices.begin(), choices.end(),
                       [](const auto& entry) { return !entry.second.finish_reason.is_null(); });
  }

  std::string body() const {
    if (!error.is_null()) return Json{{"error", error}}.dump(-1, ' ', false, Json::error_handler_t::replace);
    Json reply = Json::object();
    reply["id"] = head.value("id", Json("chatcmpl-stream"));
    reply["object"] = "chat.completion";
    if (head.contains("created")) reply["created"] = head["created"];
    if (head.contains("model")) reply["model"] = head["model"];
    Json list = Json::array();
    for (const auto& [index, choice] : choices) {
      Json message = {{"role", choice.role}, {"content", choice.content}};
      if (choice.has_reasoning) message["reasoning_content"] = choice.reasoning;
      Json entry = {{"index", index}, {"message", message}, {"finish_reason", choice.finish_reason}};
      if (choice.has_logprobs) entry["logprobs"] = {{"content", choice.logprobs}};
      list.push_back(entry);
    }
    reply["choices"] = list;
    if (!usage.is_null()) reply["usage"] = usage;
    return reply.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
};

}  // namespace

AssembledStream assemble_event_stream(std::string_view events) {
  Assembly assembly;
  std::string data;  // the data lines of the event being read
  bool has_data = false;
  size_t start = 0;
  while (start <= events.size()) {
    size_t end = events.find('\n', start);
    const bool last = end == std::string_view::npos;
    if (last) end = events.size();
    std::string_view line = events.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {  // an event ends
      if (has_data) assembly.event(data);
      data.clear();
      has_data = false;
    } else if (line.rfind("data:", 0) == 0) {
      std::string_view value = line.substr(5);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (has_data) data += '\n';
      data += value;
      has_data = true;
    }  // comments (":"), event:, id: and retry: lines carry nothing a reply needs
    if (last) break;
    start = end + 1;
  }
  if (has_data) assembly.event(data);
  return {assembly.body(), assembly.done || assembly.finished()};
}

bool is_event_stream(std::string_view content_type) {
  std::string lower;
  for (const char c : content_type) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("text/event-stream") != std::string::npos;
}

}  // namespace dicebench::openai
