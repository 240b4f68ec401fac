// The openai: model's settings ([openai] in TOML, --set openai.KEY=VALUE), read and checked once
// when the model opens, and the part of them that shapes completions (the run record).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <variant>

namespace dicebench::openai {

// Where each request's seed comes from: none (the default: a re-run with another run seed still
// finds its answers in the cache), the per-sample seed the host derives, or a fixed number.
struct SampleSeed {};
struct NoSeed {};
using SeedSetting = std::variant<SampleSeed, NoSeed, long long>;

struct Settings {
  std::string model;  // the served model's name (the text after "openai:")
  std::string base_url = "https://api.openai.com/v1";
  std::string api_key_env = "OPENAI_API_KEY";  // empty: the server takes no key
  nlohmann::ordered_json sampling =
      nlohmann::ordered_json::object();  // max_tokens, temperature, top_p, reasoning_effort, stop
  SeedSetting seed = NoSeed{};
  bool use_n = false;  // one request with "n" for the samples of a problem (servers that support it)
  nlohmann::ordered_json extra_body = nlohmann::ordered_json::object();
  size_t concurrency = 8;
  bool stream = true;               // replies stream (server-sent events), so idle_timeout_s applies between tokens
  double idle_timeout_s = 300;      // an attempt that receives nothing for this long is abandoned (and retried)
  std::optional<double> timeout_s;  // a limit on a whole attempt; none by default
  double retry_window_s = 180;      // how long after a request's first failure it is still retried
  std::optional<int> max_retries;   // a cap on retries within the window; none by default
  bool cache = true;
  std::string cache_path;  // empty when the cache is off
};

// Reads "openai.<key>" through `lookup`; `database` is the results database, beside which the
// cache lives. Throws std::runtime_error with one line naming the bad setting.
Settings read_settings(const std::string& model,
                       const std::function<std::optional<std::string>(const std::string&)>& lookup,
                       const std::string& database);

// The settings that shape completions, as the run record keeps them; a resumed run must see the
// same. Not where the server is (base_url: a resume may move to a new address), how requests go
// out (concurrency, streaming, timeouts, retries), the cache or the key's variable.
nlohmann::ordered_json describe(const Settings& settings);

}  // namespace dicebench::openai
