// The openai: model plugin: serves "openai:<model>", completions from an OpenAI-compatible
// chat-completions server (vLLM, SGLang, llama.cpp's server, OpenRouter, DeepSeek, OpenAI),
// through the C ABI of plugin.h. Requests go out concurrently (http_transfers.hpp); answers are
// kept in the request cache (request_cache.hpp) and read back from it on a re-run or a resume.
// With openai.n = on, the samples of one problem share one request asking for n choices, and each
// sample records its own share of the reply's usage. A request the server answers with an error
// of the request's own (a 400, a reply that is no chat completion) gives its sample an empty
// completion and the reason in its statistics ("error"); the run goes on. A request that gets no
// answer within the retry window (no reply, timeouts, 429, 5xx) or that the server stops taking
// (401, 403, 404) is no sample result: nothing is stored for it, and generate returns
// DICEBENCH_CANCELLED with the reason, so the run stops interrupted and a resume asks again.
// The API key lives in this process's memory only.
#include "models/openai/chat_completion.hpp"
#include "models/openai/http_transfers.hpp"
#include "models/openai/openai_settings.hpp"
#include "models/openai/request_cache.hpp"

#include <dicebench_build_info.h>
#include <dicebench/generation_stats.hpp>
#include <dicebench/plugin.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace dicebench::openai;
namespace sdk = dicebench::sdk;
namespace stats = dicebench::stats;

// The opaque handle of plugin.h.
struct dicebench_model {
  sdk::Host host;
  Settings settings;
  std::string authorization;  // "Authorization: Bearer <key>", or empty
  std::unique_ptr<RequestCache> cache;
  // Whether the server is known to serve the model: its model list named it, or a request for it
  // was answered. Until then the first request goes alone, and its refusal is the run's one error.
  bool model_confirmed = false;
};

namespace {

std::string dump(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

TransferSettings transfer_settings(const dicebench_model& model) {
  TransferSettings transfer;
  transfer.concurrency = model.settings.concurrency;
  transfer.timeout_s = model.settings.timeout_s;
  transfer.idle_timeout_s = model.settings.idle_timeout_s;
  transfer.retry_window_s = model.settings.retry_window_s;
  transfer.max_retries = model.settings.max_retries;
  if (!model.authorization.empty()) transfer.headers.push_back(model.authorization);
  const sdk::Host host = model.host;  // a view of the host's services, which outlive the model
  transfer.log_retries = [host](const std::string& line) { host.log(DICEBENCH_LOG_INFO, line); };
  return transfer;
}

struct Prepared {
  std::string body;
  std::string key;
};

Prepared prepare_request(const dicebench_model& model, const dicebench_generation_request& request) {
  Prepared p;
  p.body = request_body(model.settings, sdk::view(request.prompt), request.seed);
  p.key = RequestCache::key(model.settings.base_url, model.settings.model, p.body, request.sample_index);
  return p;
}

// "http://host:port/v1" for "http://host:port" (or ".../v1" added to whatever path it has).
std::string with_v1(const std::string& base_url) { return base_url + "/v1"; }

bool ends_with_v1(const std::string& base_url) {
  return base_url.size() >= 3 && base_url.compare(base_url.size() - 3, 3, "/v1") == 0;
}

// Asks the server for its model list once, before anything is stored: an address that answers
// nothing, a key it refuses or that is missing, a base URL that is not the API's root (no /v1),
// or a model it does not serve is one error. A max_tokens beyond the served model's context
// length (vLLM's max_model_len) is warned about. True where the list names the model.
bool check_server(const dicebench_model& model) {
  const Settings& settings = model.settings;
  TransferSettings probe = transfer_settings(model);
  probe.concurrency = 1;
  probe.timeout_s = std::min(settings.timeout_s.value_or(10.0), 10.0);
  probe.max_retries = 1;
  probe.retry_window_s = 5;
  probe.backoff.base_s = 0.2;
  probe.log_retries = nullptr;  // its failure is the error line itself
  HttpReply reply;
  send_all(
      {{settings.base_url + "/models", ""}}, probe, [] { return false; },
      [&](size_t, HttpReply&& r) { reply = std::move(r); });
  if (reply.status == 0)
    throw sdk::Failure("openai: cannot reach " + settings.base_url + " (" + reply.transport_error +
                       "); is the server running? (--set openai.base_url=...)");
  if (reply.status == 401 || reply.status == 403) {
    const std::string said = "HTTP " + std::to_string(reply.status) + ": " + error_message(reply.body);
    if (settings.api_key_env.empty())
      throw sdk::Failure("openai: " + settings.base_url + " wants an API key (" + said +
                         ") and none was sent, as openai.api_key_env is empty: export the key in a variable and "
                         "pass --set openai.api_key_env=VARIABLE");
    throw sdk::Failure("openai: " + settings.base_url + " refused the API key from $" + settings.api_key_env + " (" +
                       said + ")");
  }
  if (reply.status == 404) {
    const std::string said = "HTTP 404: " + error_message(reply.body);
    if (!ends_with_v1(settings.base_url))
      throw sdk::Failure(
          "openai: " + settings.base_url + "/models is not found (" + said +
          "); OpenAI-compatible servers answer under /v1: --set openai.base_url=" + with_v1(settings.base_url));
    throw sdk::Failure("openai: " + settings.base_url + "/models is not found (" + said +
                       "); is openai.base_url the root of an OpenAI-compatible API?");
  }
  if (reply.status < 200 || reply.status >= 300) {
    model.host.log(DICEBENCH_LOG_WARN, "openai: " + settings.base_url + "/models answered HTTP " +
                                           std::to_string(reply.status) + " (" + error_message(reply.body) +
                                           "); the served models are not checked");
    return false;
  }
  const auto served = read_model_list(reply.body);
  if (!served || served->ids.empty()) return false;  // a server that lists nothing: nothing to check against
  const std::vector<std::string>& ids = served->ids;
  if (std::find(ids.begin(), ids.end(), settings.model) == ids.end()) {
    std::string names;
    for (size_t i = 0; i < ids.size() && i < 20; ++i) names += (i ? ", " : "") + ids[i];
    if (ids.size() > 20) names += ", ... (" + std::to_string(ids.size()) + " in all)";
    throw sdk::Failure("openai: " + settings.base_url + " does not serve the model '" + settings.model +
                       "'; it serves " + names + " (--model openai:NAME)");
  }
  const auto length = served->max_model_len.find(settings.model);
  if (length != served->max_model_len.end() && settings.sampling.contains("max_tokens") &&
      settings.sampling["max_tokens"].get<int64_t>() >= length->second)
    model.host.log(
        DICEBENCH_LOG_WARN,
        "openai: openai.max_tokens = " + settings.sampling["max_tokens"].dump() + " is not below the served model's " +
            "max_model_len " + std::to_string(length->second) + " (from " + settings.base_url +
            "/models), which holds the prompt and the completion together: the server will refuse the requests "
            "or cut their completions");
  return true;
}

// The statistics of an answered sample.
nlohmann::ordered_json answer_stats(const ChatAnswer& answer, double seconds, int attempts, bool cached,
                                    const std::string& key) {
  nlohmann::ordered_json s = {{"source", "openai"}};
  s[stats::kFinishReason] = answer.finish_reason;
  if (answer.prompt_tokens) s[stats::kPromptTokens] = *answer.prompt_tokens;
  if (answer.completion_tokens) s[stats::kCompletionTokens] = *answer.completion_tokens;
  if (!answer.usage_split.empty()) {
    s["usage_split"] = answer.usage_split;
    s["reply_choices"] = answer.choices;
  }
  s[stats::kLatencySeconds] = seconds;
  s["attempts"] = attempts;
  s[stats::kCached] = cached;
  s["cache_key"] = key;
  return s;
}

void emit(dicebench_result_sink sink, void* user, size_t index, const std::string& completion,
          const nlohmann::ordered_json& stats_json) {
  const std::string text = dump(stats_json);
  dicebench_generation_result result{};
  result.completion = sdk::str(completion);
  result.stats_json = sdk::str(text);
  result.optional_candidate = dicebench_str{nullptr, 0};
  sink(user, index, &result);
}

dicebench_status openai_open(const dicebench_host_services* services, dicebench_str name, dicebench_str argument,
                             dicebench_model** out, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const std::string_view n = sdk::view(name);
    if (n != "openai:") throw sdk::Failure("the openai plugin serves 'openai:<model>', not '" + std::string(n) + "'");
    const std::string served(sdk::view(argument));
    if (served.empty())
      throw sdk::Failure("openai needs the served model's name: --model openai:<model> (e.g. openai:gpt-4o-mini)");
    sdk::Host host(services);
    auto model = std::make_unique<dicebench_model>(dicebench_model{host, {}, {}, {}});
    try {
      model->settings = read_settings(
          served, [&](const std::string& key) { return host.config(key); }, host.config("db").value_or(""));
    } catch (const std::runtime_error& e) {
      throw sdk::Failure(e.what());
    }
    const std::string& variable = model->settings.api_key_env;
    if (!variable.empty()) {
      const char* key = std::getenv(variable.c_str());
      if (!key || !*key)
        throw sdk::Failure("openai: the API key variable $" + variable +
                           " is not set; export it, or pass --set "
                           "openai.api_key_env= for a server that takes no key");
      model->authorization = std::string("Authorization: Bearer ") + key;
    }
    if (model->settings.cache) {
      try {
        model->cache = std::make_unique<RequestCache>(model->settings.cache_path);
      } catch (const std::runtime_error& e) {
        throw sdk::Failure(e.what());
      }
    }
    host.log(DICEBENCH_LOG_INFO, "openai: " + served + " at " + model->settings.base_url + ", " +
                                     std::to_string(model->settings.concurrency) +
                                     " requests in flight, request cache " +
                                     (model->cache ? model->cache->path() : std::string("off")));
    *out = model.release();
    return DICEBENCH_OK;
  });
}

void openai_close(dicebench_model* model) { delete model; }

dicebench_status openai_describe(const dicebench_model* model, dicebench_text_sink sink, void* user,
                                 dicebench_error* error) {
  return sdk::guard(error, [&] {
    sdk::emit(sink, user, dump(describe(model->settings)));
    return DICEBENCH_OK;
  });
}

size_t openai_preferred_batch(const dicebench_model* model) {
  return std::max<size_t>(16, model->settings.concurrency * 4);
}

dicebench_status openai_prepare(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                dicebench_error* error) {
  return sdk::guard(error, [&] {
    size_t cached = 0;
    for (size_t i = 0; i < count && model->cache; ++i)
      if (model->cache->find(prepare_request(*model, requests[i]).key)) ++cached;
    if (cached < count && !model->model_confirmed) model->model_confirmed = check_server(*model);
    if (cached)
      model->host.log(DICEBENCH_LOG_INFO, "openai: " + std::to_string(cached) + " of " + std::to_string(count) +
                                              " requests answered from the request cache");
    return DICEBENCH_OK;
  });
}

// Requests that share one HTTP request: one sample each, or with openai.n the samples of one
// problem in this batch (their bodies are the same; the sample index tells their keys apart).
std::vector<std::vector<size_t>> group_requests(const dicebench_model& model,
                                                const dicebench_generation_request* requests,
                                                const std::vector<size_t>& indices) {
  std::vector<std::vector<size_t>> groups;
  for (const size_t i : indices) {
    if (model.settings.use_n && !groups.empty()) {
      const auto& first = requests[groups.back().front()];
      if (first.level == requests[i].level && first.problem_id == requests[i].problem_id &&
          sdk::view(first.prompt) == sdk::view(requests[i].prompt)) {
        groups.back().push_back(i);
        continue;
      }
    }
    groups.push_back({i});
  }
  return groups;
}

// Whether a final reply means the server is not answering now (no reply, timeouts, 429 or 5xx past
// the retry window) or stopped taking the requests (401, 403: the key; 404: the model or the path
// went away) rather than answering this request: such a failure is no sample result.
bool server_unavailable(const HttpReply& reply) {
  return worth_retrying({reply.status, {}}) || reply.status == 401 || reply.status == 403 || reply.status == 404;
}

dicebench_status openai_generate(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                 dicebench_result_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    const Settings& settings = model->settings;
    const auto emit_one = [&](size_t i, const std::string& completion, const nlohmann::ordered_json& stats_json) {
      emit(sink, user, i, completion, stats_json);
    };
    std::vector<Prepared> prepared;
    std::vector<size_t> unanswered;  // indices into requests
    for (size_t i = 0; i < count; ++i) {
      prepared.push_back(prepare_request(*model, requests[i]));
      if (model->cache) {
        if (auto hit = model->cache->find(prepared[i].key)) {
          auto read = read_reply(hit->body, hit->choice);
          if (auto* answer = std::get_if<ChatAnswer>(&read)) {
            emit_one(i, answer->completion, answer_stats(*answer, hit->seconds, 0, true, prepared[i].key));
            continue;
          }
        }
      }
      unanswered.push_back(i);
    }
    const auto fail = [&](size_t i, const std::string& failure, const HttpReply& reply) {
      const dicebench_generation_request& request = requests[i];
      model->host.log(DICEBENCH_LOG_WARN, "openai: level " + std::to_string(request.level) + " problem " +
                                              std::to_string(request.problem_id) + " sample " +
                                              std::to_string(request.sample_index) + " failed: " + failure);
      nlohmann::ordered_json s = {{"source", "openai"}};
      s[stats::kError] = failure;
      if (reply.status) s["http_status"] = reply.status;
      s[stats::kLatencySeconds] = reply.seconds;
      s["attempts"] = reply.attempts;
      s[stats::kCached] = false;
      emit_one(i, "", s);
    };
    // The first failure that is no sample result; once set, nothing new is sent.
    std::string unavailable;
    double unavailable_retried_s = 0;  // how long its request was retried
    std::string refused_first;         // the refusal of the first request of a model not confirmed yet
    // Sends the groups; returns the requests a reply held no choice for (a server ignoring "n").
    const auto send_groups = [&](const std::vector<std::vector<size_t>>& groups,
                                 std::vector<size_t>& short_of_choices) {
      std::vector<HttpRequest> http;
      for (const auto& group : groups)
        http.push_back({settings.base_url + "/chat/completions",
                        for_sending(prepared[group.front()].body, group.size(), settings.stream)});
      const auto on_reply = [&](size_t g, HttpReply&& reply) {
        const std::vector<size_t>& group = groups[g];
        const std::string tries = reply.attempts > 1 ? " after " + std::to_string(reply.attempts) + " attempts" : "";
        std::string failure;
        if (reply.status == 0) {
          failure = "no reply from " + settings.base_url + tries + ": " + reply.transport_error;
        } else if (reply.status < 200 || reply.status >= 300) {
          failure =
              "HTTP " + std::to_string(reply.status) + " from the server" + tries + ": " + error_message(reply.body);
        } else if (auto first = read_reply(reply.body, 0); std::holds_alternative<std::string>(first)) {
          failure = std::get<std::string>(first);
          if (nlohmann::json::parse(reply.body, nullptr, false).contains("error"))
            failure = "the server's reply is an error" + tries + ": " + error_message(reply.body);
        }
        if (!failure.empty() && !model->model_confirmed && reply.status >= 400 && reply.status < 500 &&
            !server_unavailable(reply)) {
          refused_first = failure;  // not a sample's failure: the run's (nothing of it is stored)
          return;
        }
        if (failure.empty()) model->model_confirmed = true;
        if (!failure.empty() && server_unavailable(reply)) {
          if (unavailable.empty()) {
            unavailable = failure;
            unavailable_retried_s = reply.retried_s;
          }
          return;  // no sample result: the samples stay to be generated
        }
        if (!failure.empty()) {
          for (const size_t i : group) fail(i, failure, reply);
          return;
        }
        const size_t choices = choice_count(reply.body);
        for (size_t j = 0; j < group.size(); ++j) {
          const size_t i = group[j];
          if (j >= choices) {
            short_of_choices.push_back(i);
            continue;
          }
          auto read = read_reply(reply.body, j);
          if (auto* answer = std::get_if<ChatAnswer>(&read)) {
            if (model->cache)
              model->cache->store(prepared[i].key, settings.base_url, settings.model, requests[i].sample_index,
                                  http[g].body, {reply.body, reply.seconds, j});
            nlohmann::ordered_json s = answer_stats(*answer, reply.seconds, reply.attempts, false, prepared[i].key);
            s["streamed"] = reply.streamed;
            emit_one(i, answer->completion, s);
          } else {
            fail(i, std::get<std::string>(read), reply);
          }
        }
      };
      return send_all(
          http, transfer_settings(*model), [&] { return model->host.cancelled(); }, on_reply,
          [&] { return !unavailable.empty(); });
    };
    std::vector<size_t> short_of_choices;
    std::vector<std::vector<size_t>> groups = group_requests(*model, requests, unanswered);
    // A model the server's list did not confirm (it lists none, or the list failed): the first
    // request goes alone, and a refusal of it (a final 4xx: "not served", "pinned to another
    // model") stops the run with one error line before anything more is stored.
    if (!model->model_confirmed && !groups.empty()) {
      const std::vector<std::vector<size_t>> first(groups.begin(), groups.begin() + 1);
      groups.erase(groups.begin());
      if (!send_groups(first, short_of_choices)) return DICEBENCH_CANCELLED;
      if (!refused_first.empty()) {
        sdk::set_error(error, "openai: the server refused the first request for the model '" + settings.model +
                                  "': " + refused_first + "; its model list (" + settings.base_url +
                                  "/models) did not name the model, so it was not checked before: is --model "
                                  "openai:NAME a model this server serves?");
        return DICEBENCH_FAILED;
      }
    }
    bool finished = groups.empty() || send_groups(groups, short_of_choices);
    if (finished && unavailable.empty() && !short_of_choices.empty()) {
      model->host.log(DICEBENCH_LOG_INFO, "openai: the server gave fewer choices than \"n\" asked for; asking for " +
                                              std::to_string(short_of_choices.size()) + " sample(s) one by one");
      std::vector<std::vector<size_t>> singles;
      for (const size_t i : short_of_choices) singles.push_back({i});
      std::vector<size_t> still_short;
      finished = send_groups(singles, still_short);
      for (const size_t i : still_short) fail(i, "the server's reply holds no choice", HttpReply{});
    }
    if (!finished) return DICEBENCH_CANCELLED;  // the host asked to stop: no message
    if (!unavailable.empty()) {
      // The server stopped answering: what it answered is stored; the rest is no sample result.
      const std::string window = settings.retry_window_s > 0
                                     ? "; retried for " + duration_text(unavailable_retried_s) +
                                           " s (openai.retry_window_s = " + seconds_text(settings.retry_window_s) +
                                           " s, and no retry is sent that would fall past it)"
                                     : "";
      sdk::set_error(error,
                     "openai: the server stopped answering: " + unavailable + window +
                         "; the samples without an answer are not stored (a resume may name a new address: --set "
                         "openai.base_url=URL)");
      return DICEBENCH_CANCELLED;
    }
    return DICEBENCH_OK;
  });
}

const dicebench_model_api kApi = {
    sizeof(dicebench_model_api),
    &openai_open,             // reads the settings and the key, opens the cache
    &openai_close,            // frees the handle
    &openai_describe,         // the settings that shape completions
    &openai_preferred_batch,  // four requests per slot in flight
    &openai_prepare,          // checks the server once, unless the cache answers everything
    &openai_generate,         // the cache, then the server
    nullptr,                  // generates; serves no stored samples
    nullptr,                  // optional_prepare_infill: a chat API fills no span natively
    nullptr,                  // optional_generate_infill
};

const dicebench_provided_name kProvides[] = {
    {sdk::str("openai:"),
     sdk::str("a model served behind an OpenAI-compatible chat-completions API (vLLM, SGLang, OpenAI, ...)")},
};

const dicebench_plugin_descriptor kDescriptor =
    sdk::descriptor(DICEBENCH_KIND_MODEL, "openai", DICEBENCH_VERSION, DICEBENCH_GIT_SHA, kProvides, &kApi);

}  // namespace

DICEBENCH_PLUGIN_ENTRY(kDescriptor)
