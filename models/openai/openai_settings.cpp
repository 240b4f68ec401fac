// Reading and checking the openai: model's settings.
#include "models/openai/openai_settings.hpp"
#include "core/base/number_text.hpp"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace dicebench::openai {
namespace {

[[noreturn]] void bad(const std::string& key, const std::string& value, const std::string& expected) {
  throw std::runtime_error("openai." + key + " = '" + value + "': expected " + expected);
}

double number(const std::string& key, const std::string& value, double low, double high) {
  const auto parsed = parse_number<double>(value, low, high);
  if (!parsed) bad(key, value, "a number from " + nlohmann::json(low).dump() + " to " + nlohmann::json(high).dump());
  return *parsed;
}

long long integer(const std::string& key, const std::string& value, long long low, long long high) {
  const auto parsed = parse_number<long long>(value, low, high);
  if (!parsed) bad(key, value, "a whole number from " + std::to_string(low) + " to " + std::to_string(high));
  return *parsed;
}

bool on_off(const std::string& key, const std::string& value) {
  if (value == "on" || value == "true") return true;
  if (value == "off" || value == "false") return false;
  bad(key, value, "on or off");
}

// `stop`: a JSON array of strings, or a comma-separated list (as TOML arrays arrive).
nlohmann::ordered_json stop_list(const std::string& value) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  if (!value.empty() && value.front() == '[') {
    try {
      list = nlohmann::ordered_json::parse(value);
    } catch (const std::exception&) {
      bad("stop", value, "a JSON array of strings or a comma-separated list");
    }
    for (const auto& item : list)
      if (!item.is_string()) bad("stop", value, "a JSON array of strings");
    return list;
  }
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) list.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return list;
}

}  // namespace

Settings read_settings(const std::string& model,
                       const std::function<std::optional<std::string>(const std::string&)>& lookup,
                       const std::string& database) {
  Settings s;
  s.model = model;
  const auto get = [&](const char* key) { return lookup(std::string("openai.") + key); };
  if (auto v = get("base_url")) {
    s.base_url = *v;
    while (!s.base_url.empty() && s.base_url.back() == '/') s.base_url.pop_back();
    if (s.base_url.rfind("http://", 0) != 0 && s.base_url.rfind("https://", 0) != 0)
      bad("base_url", *v, "an http:// or https:// address such as http://127.0.0.1:8000/v1");
  }
  if (auto v = get("api_key_env")) s.api_key_env = *v;
  if (auto v = get("max_tokens")) s.sampling["max_tokens"] = integer("max_tokens", *v, 1, 10'000'000);
  if (auto v = get("temperature")) s.sampling["temperature"] = number("temperature", *v, 0, 10);
  if (auto v = get("top_p")) {
    // Servers refuse 0 (vLLM: "top_p must be in (0, 1]"); greedy decoding is temperature = 0.
    const double top_p = number("top_p", *v, 0, 1);
    if (top_p <= 0)
      bad("top_p", *v,
          "a number above 0 and at most 1 (servers refuse 0; for greedy decoding set openai.temperature=0)");
    s.sampling["top_p"] = top_p;
  }
  if (auto v = get("reasoning_effort")) s.sampling["reasoning_effort"] = *v;
  if (auto v = get("stop")) s.sampling["stop"] = stop_list(*v);
  if (auto v = get("seed")) {
    if (*v == "sample")
      s.seed = SampleSeed{};
    else if (*v == "off")
      s.seed = NoSeed{};
    else
      s.seed = integer("seed", *v, 0, (1LL << 53));
  }
  if (auto v = get("extra_body")) {
    try {
      s.extra_body = nlohmann::ordered_json::parse(*v);
    } catch (const std::exception&) {
      bad("extra_body", *v, "a JSON object, e.g. {\"top_k\": 20}");
    }
    if (!s.extra_body.is_object()) bad("extra_body", *v, "a JSON object, e.g. {\"top_k\": 20}");
  }
  if (auto v = get("concurrency")) s.concurrency = static_cast<size_t>(integer("concurrency", *v, 1, 1024));
  if (auto v = get("stream")) s.stream = on_off("stream", *v);
  if (auto v = get("idle_timeout_s")) s.idle_timeout_s = number("idle_timeout_s", *v, 1, 86400);
  if (auto v = get("timeout_s"); v && *v != "off") s.timeout_s = number("timeout_s", *v, 0.001, 86400);
  if (auto v = get("retry_window_s")) s.retry_window_s = number("retry_window_s", *v, 0, 7 * 86400);
  if (auto v = get("max_retries"); v && *v != "off")
    s.max_retries = static_cast<int>(integer("max_retries", *v, 0, 1000));
  if (auto v = get("n")) s.use_n = on_off("n", *v);
  if (s.use_n && std::holds_alternative<SampleSeed>(s.seed))
    throw std::runtime_error(
        "openai.n = on asks for several samples in one request, which takes one seed: "
        "set openai.seed to off or a number");
  if (auto v = get("cache")) s.cache = on_off("cache", *v);
  if (s.cache) s.cache_path = (database.empty() ? std::string("dicebench.db") : database) + ".openai-cache.sqlite";
  return s;
}

nlohmann::ordered_json describe(const Settings& s) {
  nlohmann::ordered_json seed;
  if (std::holds_alternative<SampleSeed>(s.seed))
    seed = "sample";
  else if (std::holds_alternative<NoSeed>(s.seed))
    seed = "off";
  else
    seed = std::get<long long>(s.seed);
  return {{"model", "openai"}, {"served_model", s.model},    {"sampling", s.sampling},
          {"seed", seed},      {"extra_body", s.extra_body}, {"n", s.use_n}};
}

}  // namespace dicebench::openai
