// Unit tests of the openai: plugin's pure parts: settings, the request body, reading replies,
// retry decisions and backoff, and the request cache's key and storage.
#include "models/openai/chat_completion.hpp"
#include "models/openai/openai_settings.hpp"
#include "models/openai/request_cache.hpp"
#include "models/openai/retry_policy.hpp"

#include "tests/plugins/temp_folder.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace dicebench::openai;

namespace {

Settings settings_from(const std::map<std::string, std::string>& values, const std::string& db = "/tmp/x.db") {
  return read_settings("m", [&](const std::string& key) -> std::optional<std::string> {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }, db);
}

}  // namespace

TEST_CASE("openai settings: defaults, every key, and one line naming a bad value") {
  const Settings d = settings_from({});
  CHECK(d.base_url == "https://api.openai.com/v1");
  CHECK(d.api_key_env == "OPENAI_API_KEY");
  CHECK(d.concurrency == 8);
  CHECK(d.cache);
  CHECK(d.cache_path == "/tmp/x.db.openai-cache.sqlite");
  CHECK(std::holds_alternative<NoSeed>(d.seed));
  CHECK_FALSE(d.use_n);

  const Settings s = settings_from({{"openai.base_url", "http://127.0.0.1:8000/v1/"}, {"openai.max_tokens", "4096"},
                                    {"openai.temperature", "0.7"}, {"openai.top_p", "0.95"}, {"openai.seed", "off"},
                                    {"openai.reasoning_effort", "low"}, {"openai.stop", "</s>,<|end|>"},
                                    {"openai.extra_body", R"({"top_k": 20})"}, {"openai.concurrency", "3"},
                                    {"openai.timeout_s", "5"}, {"openai.max_retries", "2"}, {"openai.cache", "off"}});
  CHECK(s.base_url == "http://127.0.0.1:8000/v1");
  CHECK(s.sampling.dump() ==
        R"({"max_tokens":4096,"temperature":0.7,"top_p":0.95,"reasoning_effort":"low","stop":["</s>","<|end|>"]})");
  CHECK(std::holds_alternative<NoSeed>(s.seed));
  CHECK(s.concurrency == 3);
  CHECK(s.max_retries == 2);
  CHECK_FALSE(s.cache);
  CHECK(s.cache_path.empty());
  // The settings that shape completions, without concurrency, retries, cache or the key's variable.
  CHECK(describe(s).dump().find("concurrency") == std::string::npos);
  CHECK(describe(s).dump().find("api_key") == std::string::npos);

  CHECK_THROWS_WITH(settings_from({{"openai.temperature", "hot"}}),
                    doctest::Contains("openai.temperature = 'hot': expected a number"));
  CHECK_THROWS_WITH(settings_from({{"openai.extra_body", "[1]"}}), doctest::Contains("openai.extra_body"));
  CHECK_THROWS_WITH(settings_from({{"openai.base_url", "127.0.0.1:8000"}}), doctest::Contains("http://"));
  CHECK_THROWS_WITH(settings_from({{"openai.concurrency", "0"}}), doctest::Contains("openai.concurrency"));
  CHECK_THROWS_WITH(settings_from({{"openai.cache", "maybe"}}), doctest::Contains("on or off"));
  CHECK(settings_from({{"openai.stop", R"(["a,b"])"}}).sampling["stop"][0] == "a,b");
  CHECK(settings_from({{"openai.n", "on"}}).use_n);
  CHECK_THROWS_WITH(settings_from({{"openai.n", "on"}, {"openai.seed", "sample"}}), doctest::Contains("one seed"));
}

TEST_CASE("openai request body: model, one user message, sampling, seed, then extra_body on top") {
  Settings s = settings_from({{"openai.temperature", "0.5"}, {"openai.seed", "sample"},
                              {"openai.extra_body", R"({"temperature": 0.1, "top_k": 5})"}});
  const auto body = nlohmann::json::parse(request_body(s, "write a kernel", 42));
  CHECK(body["model"] == "m");
  CHECK(body["messages"].size() == 1);
  CHECK(body["messages"][0]["role"] == "user");
  CHECK(body["messages"][0]["content"] == "write a kernel");
  CHECK(body["seed"] == 42);
  CHECK(body["temperature"] == 0.1);
  CHECK(body["top_k"] == 5);
  s.seed = 7LL;
  CHECK(nlohmann::json::parse(request_body(s, "p", 42))["seed"] == 7);
  s.seed = NoSeed{};
  CHECK_FALSE(nlohmann::json::parse(request_body(s, "p", 42)).contains("seed"));
  CHECK(with_n(request_body(s, "p", 42), 1) == request_body(s, "p", 42));
  CHECK(nlohmann::json::parse(with_n(request_body(s, "p", 42), 3))["n"] == 3);
}

TEST_CASE("openai replies: a chat completion, or one line quoting the start of what came") {
  auto good = read_reply(R"({"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"length"}],
                             "usage":{"prompt_tokens":3,"completion_tokens":1}})");
  REQUIRE(std::holds_alternative<ChatAnswer>(good));
  CHECK(std::get<ChatAnswer>(good).completion == "hi");
  CHECK(std::get<ChatAnswer>(good).finish_reason == "length");
  CHECK(std::get<ChatAnswer>(good).prompt_tokens == 3);
  CHECK(std::get<ChatAnswer>(good).completion_tokens == 1);
  CHECK(choice_count(R"({"choices":[{"message":{"content":"a"}},{"message":{"content":"b"}}]})") == 2);
  CHECK(std::get<ChatAnswer>(read_reply(R"({"choices":[{"message":{"content":"a"}},{"message":{"content":"b"}}]})", 1))
            .completion == "b");
  CHECK(std::holds_alternative<std::string>(read_reply(R"({"choices":[{"message":{"content":"a"}}]})", 1)));
  CHECK(choice_count("nope") == 0);

  auto html = read_reply("<html>Bad gateway</html>");
  REQUIRE(std::holds_alternative<std::string>(html));
  CHECK(std::get<std::string>(html) == "the server's reply is not JSON: '<html>Bad gateway</html>'");
  auto list = read_reply(R"({"object":"list","data":[]})");
  REQUIRE(std::holds_alternative<std::string>(list));
  CHECK(std::get<std::string>(list).find("not a chat completion: '{\"object\"") != std::string::npos);
  CHECK(std::holds_alternative<std::string>(read_reply(R"({"choices":[]})")));
  CHECK(std::holds_alternative<std::string>(read_reply(R"({"choices":[{"message":{"content":5}}]})")));
  const std::string long_reply(1000, 'x');
  CHECK(std::get<std::string>(read_reply(long_reply)).size() < 300);

  CHECK(error_message(R"({"error":{"message":"bad key"}})") == "'bad key'");
  CHECK(error_message("plain text") == "'plain text'");
}

TEST_CASE("openai retries: 429, 5xx and no reply are retried - backoff doubles, caps, jitters - Retry-After wins") {
  CHECK(worth_retrying({0, {}}));
  CHECK(worth_retrying({429, {}}));
  CHECK(worth_retrying({500, {}}));
  CHECK(worth_retrying({503, {}}));
  CHECK_FALSE(worth_retrying({400, {}}));
  CHECK_FALSE(worth_retrying({401, {}}));
  CHECK_FALSE(worth_retrying({404, {}}));
  CHECK_FALSE(worth_retrying({200, {}}));

  const Backoff b{0.5, 4};
  CHECK(retry_delay_s(1, {500, {}}, b, 0.0) == doctest::Approx(0.25));
  CHECK(retry_delay_s(1, {500, {}}, b, 0.999) == doctest::Approx(0.5).epsilon(0.01));
  CHECK(retry_delay_s(2, {500, {}}, b, 0.0) == doctest::Approx(0.5));
  CHECK(retry_delay_s(3, {500, {}}, b, 0.0) == doctest::Approx(1.0));
  CHECK(retry_delay_s(10, {500, {}}, b, 0.0) == doctest::Approx(2.0));  // capped at 4, jittered down to half
  CHECK(retry_delay_s(1, {429, 7.0}, b, 0.3) == doctest::Approx(7.0));
  CHECK(retry_delay_s(1, {429, 1e9}, b, 0.3) == doctest::Approx(600));

  CHECK(parse_retry_after_seconds(" 2\r\n") == 2.0);
  CHECK(parse_retry_after_seconds("0.5") == 0.5);
  CHECK_FALSE(parse_retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT"));
  CHECK_FALSE(parse_retry_after_seconds("-1"));
  CHECK_FALSE(parse_retry_after_seconds(""));
}

TEST_CASE("openai request cache: the key covers base URL, model, body and sample - answers survive reopening") {
  const std::string k = RequestCache::key("http://a/v1", "m", "{}", 0);
  CHECK(k.rfind("sha256:", 0) == 0);
  CHECK(k == RequestCache::key("http://a/v1", "m", "{}", 0));
  CHECK(k != RequestCache::key("http://b/v1", "m", "{}", 0));
  CHECK(k != RequestCache::key("http://a/v1", "n", "{}", 0));
  CHECK(k != RequestCache::key("http://a/v1", "m", "{ }", 0));
  CHECK(k != RequestCache::key("http://a/v1", "m", "{}", 1));
  // Parts are delimited: moving text from one part to the next changes the key.
  CHECK(RequestCache::key("ab", "c", "{}", 0) != RequestCache::key("a", "bc", "{}", 0));

  dicebench::test::TempFolder folder;
  const std::string path = (folder.path() / "cache.sqlite").string();
  {
    RequestCache cache(path);
    CHECK_FALSE(cache.find(k));
    cache.store(k, "http://a/v1", "m", 0, "{}", {"reply body", 1.5, 2});
  }
  RequestCache reopened(path);
  const auto hit = reopened.find(k);
  REQUIRE(hit);
  CHECK(hit->body == "reply body");
  CHECK(hit->seconds == 1.5);
  CHECK(hit->choice == 2);
  CHECK_THROWS_WITH(RequestCache((folder.path() / "missing" / "cache.sqlite").string()),
                    doctest::Contains("cannot open the request cache"));
}
