// Unit tests of the openai: plugin's pure parts: settings, the request body, reading replies,
// retry decisions and backoff, and the request cache's key and storage.
#include "models/openai/chat_completion.hpp"
#include "models/openai/event_stream.hpp"
#include "models/openai/openai_settings.hpp"
#include "models/openai/request_cache.hpp"
#include "models/openai/retry_policy.hpp"

#include "tests/plugins/temp_folder.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace dicebench::openai;

namespace {

Settings settings_from(const std::map<std::string, std::string>& values, const std::string& db = "/tmp/x.db") {
  return read_settings(
      "m",
      [&](const std::string& key) -> std::optional<std::string> {
        auto it = values.find(key);
        if (it == values.end()) return std::nullopt;
        return it->second;
      },
      db);
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

  const Settings s = settings_from({{"openai.base_url", "http://127.0.0.1:8000/v1/"},
                                    {"openai.max_tokens", "4096"},
                                    {"openai.temperature", "0.7"},
                                    {"openai.top_p", "0.95"},
                                    {"openai.seed", "off"},
                                    {"openai.reasoning_effort", "low"},
                                    {"openai.stop", "</s>,<|end|>"},
                                    {"openai.extra_body", R"({"top_k": 20})"},
                                    {"openai.concurrency", "3"},
                                    {"openai.timeout_s", "5"},
                                    {"openai.max_retries", "2"},
                                    {"openai.cache", "off"}});
  CHECK(s.base_url == "http://127.0.0.1:8000/v1");
  CHECK(s.sampling.dump() ==
        R"({"max_tokens":4096,"temperature":0.7,"top_p":0.95,"reasoning_effort":"low","stop":["</s>","<|end|>"]})");
  CHECK(std::holds_alternative<NoSeed>(s.seed));
  CHECK(s.concurrency == 3);
  CHECK(s.max_retries == 2);
  CHECK(s.timeout_s == 5.0);
  CHECK_FALSE(s.cache);
  CHECK(s.cache_path.empty());
  // The settings that shape completions, without concurrency, retries, cache or the key's variable.
  CHECK(describe(s).dump().find("concurrency") == std::string::npos);
  CHECK(describe(s).dump().find("api_key") == std::string::npos);

  // Where the server is does not shape completions: a resume may move to a new address.
  CHECK(describe(s).dump().find("127.0.0.1") == std::string::npos);
  // Streaming with an idle timeout, no limit on a whole attempt, a retry window of 180 s without a
  // cap on retries: what a model server's restart needs.
  CHECK(d.stream);
  CHECK(d.idle_timeout_s == 300);
  CHECK_FALSE(d.timeout_s);
  CHECK(d.retry_window_s == 180);
  CHECK_FALSE(d.max_retries);
  const Settings t = settings_from({{"openai.stream", "off"},
                                    {"openai.idle_timeout_s", "30"},
                                    {"openai.timeout_s", "off"},
                                    {"openai.retry_window_s", "0"},
                                    {"openai.max_retries", "off"}});
  CHECK_FALSE(t.stream);
  CHECK(t.idle_timeout_s == 30);
  CHECK_FALSE(t.timeout_s);
  CHECK(t.retry_window_s == 0);
  CHECK_FALSE(t.max_retries);
  CHECK_THROWS_WITH(settings_from({{"openai.retry_window_s", "-1"}}), doctest::Contains("openai.retry_window_s"));
  CHECK_THROWS_WITH(settings_from({{"openai.idle_timeout_s", "0"}}), doctest::Contains("openai.idle_timeout_s"));
  CHECK_THROWS_WITH(settings_from({{"openai.stream", "sometimes"}}), doctest::Contains("on or off"));
  // Servers refuse top_p = 0.
  CHECK_THROWS_WITH(settings_from({{"openai.top_p", "0"}}),
                    doctest::Contains("openai.top_p = '0': expected a number above 0"));
  CHECK(settings_from({{"openai.top_p", "1"}}).sampling["top_p"] == 1.0);

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
  Settings s = settings_from({{"openai.temperature", "0.5"},
                              {"openai.seed", "sample"},
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

TEST_CASE("openai replies of n choices: one usage for all of them is split per choice, adding up to the reply's") {
  // vLLM: "usage" covers every choice; 10 completion tokens over 3 choices: 4, 3, 3.
  const std::string reply =
      R"({"choices":[{"message":{"content":"a"}},{"message":{"content":"b"}},{"message":{"content":"c"}}],
                                "usage":{"prompt_tokens":7,"completion_tokens":10}})";
  int64_t sum = 0;
  for (size_t i = 0; i < 3; ++i) {
    const auto answer = std::get<ChatAnswer>(read_reply(reply, i));
    CHECK(answer.usage_split == "even");
    CHECK(answer.choices == 3);
    CHECK(answer.prompt_tokens == 7);  // the prompt each choice answered
    sum += *answer.completion_tokens;
  }
  CHECK(sum == 10);
  CHECK(std::get<ChatAnswer>(read_reply(reply, 0)).completion_tokens == 4);
  CHECK(std::get<ChatAnswer>(read_reply(reply, 2)).completion_tokens == 3);
  // A choice's own count wins: its logprobs' tokens (or its own usage).
  const std::string own =
      R"({"choices":[{"message":{"content":"a b"},"logprobs":{"content":[{"token":"a"},{"token":" b"}]}},
                                         {"message":{"content":"c"},"usage":{"completion_tokens":5}}],
                              "usage":{"prompt_tokens":7,"completion_tokens":7}})";
  CHECK(std::get<ChatAnswer>(read_reply(own, 0)).completion_tokens == 2);
  CHECK(std::get<ChatAnswer>(read_reply(own, 0)).usage_split == "per_choice");
  CHECK(std::get<ChatAnswer>(read_reply(own, 1)).completion_tokens == 5);
  // One choice: the usage is its own.
  const auto single =
      std::get<ChatAnswer>(read_reply(R"({"choices":[{"message":{"content":"a"}}],"usage":{"completion_tokens":3}})"));
  CHECK(single.completion_tokens == 3);
  CHECK(single.usage_split.empty());
}

TEST_CASE("openai streamed replies: server-sent events read back into one chat completion") {
  const std::string events =
      "data: "
      "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":5,\"model\":\"m\",\"choices\":[{\"index\":0,"
      "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
      ": a comment\r\n\r\n"
      "data: "
      "{\"id\":\"c1\",\"choices\":[{\"index\":1,\"delta\":{\"content\":\"x\"},\"logprobs\":{\"content\":[{\"token\":"
      "\"x\"}]}}]}\n\n"
      "data: "
      "{\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\",\"reasoning_content\":\"hm\"}}]}"
      "\r\n\r\n"
      "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" "
      "world\"},\"finish_reason\":\"length\"}]}\n\n"
      "data: {\"id\":\"c1\",\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: not json\n\n"
      "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\n"
      "data: [DONE]\n\n";
  const AssembledStream assembled = assemble_event_stream(events);
  CHECK(assembled.complete);
  const auto reply = nlohmann::json::parse(assembled.body);
  CHECK(reply["object"] == "chat.completion");
  CHECK(reply["model"] == "m");
  CHECK(reply["choices"].size() == 2);
  const auto first = std::get<ChatAnswer>(read_reply(assembled.body, 0));
  CHECK(first.completion == "Hello world");
  CHECK(first.finish_reason == "length");
  CHECK(reply["choices"][0]["message"]["reasoning_content"] == "hm");
  const auto second = std::get<ChatAnswer>(read_reply(assembled.body, 1));
  CHECK(second.completion == "x");
  CHECK(second.finish_reason == "stop");
  CHECK(second.completion_tokens == 1);  // its logprobs' one token
  CHECK(first.completion_tokens == 3);   // the rest of the usage
  CHECK(first.prompt_tokens == 3);

  // Cut before [DONE] and before a finish_reason: incomplete. An error event is the reply.
  CHECK_FALSE(assemble_event_stream("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n").complete);
  // Without [DONE] (transformers serve ends streams so), complete once every choice that came has its
  // finish_reason (a server ignoring n sends one: the caller asks for the rest); a choice still open
  // leaves it cut.
  const std::string finished =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n";
  const AssembledStream without_done = assemble_event_stream(finished);
  CHECK(without_done.complete);
  CHECK(std::get<ChatAnswer>(read_reply(without_done.body, 0)).completion == "a");
  CHECK(choice_count(without_done.body) == 1);
  CHECK_FALSE(assemble_event_stream(finished + "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"b\"}}]}\n\n")
                  .complete);
  CHECK(assemble_event_stream(finished +
                              "data: {\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
            .complete);
  CHECK_FALSE(assemble_event_stream("data: {\"choices\":[]}\n\n").complete);  // no choice at all
  CHECK_FALSE(assemble_event_stream("data: {\"error\":{\"message\":\"engine died\"}}\n\n").complete);
  const AssembledStream failed =
      assemble_event_stream("data: {\"error\":{\"message\":\"engine died\"}}\n\ndata: [DONE]\n\n");
  CHECK(error_message(failed.body) == "'engine died'");
  CHECK(has_aborted_choice(R"({"choices":[{"message":{"content":"a"},"finish_reason":"abort"}]})"));
  CHECK_FALSE(has_aborted_choice(R"({"choices":[{"message":{"content":"a"},"finish_reason":"length"}]})"));
  CHECK_FALSE(has_aborted_choice("not json"));
  CHECK(is_event_stream("text/event-stream; charset=utf-8"));
  CHECK_FALSE(is_event_stream("application/json"));
}

TEST_CASE("openai requests as sent, model lists and error bodies as vLLM gives them") {
  const std::string body = R"({"model":"m","messages":[]})";
  CHECK(for_sending(body, 1, false) == body);
  const auto sent = nlohmann::json::parse(for_sending(body, 3, true));
  CHECK(sent["n"] == 3);
  CHECK(sent["stream"] == true);
  CHECK(sent["stream_options"]["include_usage"] == true);
  CHECK_FALSE(nlohmann::json::parse(for_sending(body, 1, true)).contains("n"));

  const auto served = read_model_list(
      R"({"object":"list","data":[{"id":"a","object":"model","max_model_len":2048},{"id":"b","object":"model"}]})");
  REQUIRE(served);
  CHECK(served->ids == std::vector<std::string>{"a", "b"});
  CHECK(served->max_model_len.at("a") == 2048);
  CHECK_FALSE(served->max_model_len.count("b"));
  CHECK_FALSE(read_model_list(R"({"detail":"Not Found"})"));

  CHECK(error_message(R"({"detail":"Not Found"})") == "'Not Found'");
  CHECK(error_message(R"({"error":"Unauthorized"})") == "'Unauthorized'");
  CHECK(error_message(R"({"error":{"message":"The model `x` does not exist.","type":"NotFoundError","code":404}})") ==
        "'The model `x` does not exist.'");
}

TEST_CASE("openai retries: 429, 5xx and no reply are retried - backoff doubles, caps, jitters - Retry-After wins") {
  CHECK(worth_retrying({0, {}}));
  CHECK(worth_retrying({429, {}}));
  CHECK(worth_retrying({500, {}}));
  CHECK(worth_retrying({503, {}}));
  CHECK(worth_retrying({408, {}}));
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

  // The window counts from a request's first failure: a retry must fall within it.
  CHECK(within_retry_window(0, 0.5, 180));
  CHECK(within_retry_window(170, 10, 180));
  CHECK_FALSE(within_retry_window(175, 10, 180));
  CHECK_FALSE(within_retry_window(0, 0.25, 0));  // a window of 0: no retry at all
  CHECK(Backoff{}.max_s == 10);                  // a restarted server is noticed within 10 s

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
