// The openai: model plugin: serves "openai:<model>", completions from an OpenAI-compatible
// chat-completions server (vLLM, SGLang, llama.cpp's server, OpenRouter, DeepSeek, OpenAI),
// through the C ABI of plugin.h. Requests go out concurrently (http_transfers.hpp); answers are
// kept in the request cache (request_cache.hpp) and read back from it on a re-run or a resume.
// With openai.n = on, the samples of one problem share one request asking for n choices.
// A request that fails gives its sample an empty completion and the reason in its statistics
// ("error"); the run goes on. The API key lives in this process's memory only.
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
};

namespace {

std::string dump(const nlohmann::ordered_json& json) {
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

TransferSettings transfer_settings(const dicebench_model& model) {
  TransferSettings transfer;
  transfer.concurrency = model.settings.concurrency;
  transfer.timeout_s = model.settings.timeout_s;
  transfer.max_retries = model.settings.max_retries;
  if (!model.authorization.empty()) transfer.headers.push_back(model.authorization);
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

// Asks the server for its model list once: an address that answers nothing, or a key it refuses,
// is one error before anything is stored.
void check_server(const dicebench_model& model) {
  TransferSettings probe = transfer_settings(model);
  probe.concurrency = 1;
  probe.timeout_s = std::min(model.settings.timeout_s, 10.0);
  probe.max_retries = 1;
  probe.backoff.base_s = 0.2;
  HttpReply reply;
  send_all({{model.settings.base_url + "/models", ""}}, probe, [] { return false; },
           [&](size_t, HttpReply&& r) { reply = std::move(r); });
  if (reply.status == 0)
    throw sdk::Failure("openai: cannot reach " + model.settings.base_url + " (" + reply.transport_error +
                       "); is the server running? (--set openai.base_url=...)");
  if (reply.status == 401 || reply.status == 403)
    throw sdk::Failure("openai: " + model.settings.base_url + " refused the API key from $" + model.settings.api_key_env +
                       " (HTTP " + std::to_string(reply.status) + ": " + error_message(reply.body) + ")");
  // A model the server does not list is likely misspelt; some servers accept unlisted aliases, so
  // this only warns.
  const nlohmann::json listing = nlohmann::json::parse(reply.body, nullptr, false);
  if (reply.status == 200 && listing.is_object() && listing.contains("data") && listing["data"].is_array()) {
    std::vector<std::string> ids;
    for (const auto& entry : listing["data"])
      if (entry.is_object() && entry.contains("id") && entry["id"].is_string()) ids.push_back(entry["id"].get<std::string>());
    if (!ids.empty() && std::find(ids.begin(), ids.end(), model.settings.model) == ids.end()) {
      std::string some;
      for (size_t i = 0; i < ids.size() && i < 5; ++i) some += (i ? ", " : "") + ids[i];
      model.host.log(DICEBENCH_LOG_WARN, "openai: " + model.settings.base_url + " does not list the model '" +
                                             model.settings.model + "' (it lists " + some +
                                             (ids.size() > 5 ? ", ..." : "") + ")");
    }
  }
}

// The statistics of an answered sample.
nlohmann::ordered_json answer_stats(const ChatAnswer& answer, double seconds, int attempts, bool cached,
                                    const std::string& key) {
  nlohmann::ordered_json s = {{"source", "openai"}};
  s[stats::kFinishReason] = answer.finish_reason;
  if (answer.prompt_tokens) s[stats::kPromptTokens] = *answer.prompt_tokens;
  if (answer.completion_tokens) s[stats::kCompletionTokens] = *answer.completion_tokens;
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
      model->settings = read_settings(served, [&](const std::string& key) { return host.config(key); },
                                      host.config("db").value_or(""));
    } catch (const std::runtime_error& e) {
      throw sdk::Failure(e.what());
    }
    const std::string& variable = model->settings.api_key_env;
    if (!variable.empty()) {
      const char* key = std::getenv(variable.c_str());
      if (!key || !*key)
        throw sdk::Failure("openai: the API key variable $" + variable + " is not set; export it, or pass --set "
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
                                     std::to_string(model->settings.concurrency) + " requests in flight, request cache " +
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

size_t openai_preferred_batch(const dicebench_model* model) { return std::max<size_t>(16, model->settings.concurrency * 4); }

dicebench_status openai_prepare(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                dicebench_error* error) {
  return sdk::guard(error, [&] {
    size_t cached = 0;
    for (size_t i = 0; i < count && model->cache; ++i)
      if (model->cache->find(prepare_request(*model, requests[i]).key)) ++cached;
    if (cached < count) check_server(*model);
    if (cached)
      model->host.log(DICEBENCH_LOG_INFO, "openai: " + std::to_string(cached) + " of " + std::to_string(count) +
                                              " requests answered from the request cache");
    return DICEBENCH_OK;
  });
}

// Requests that share one HTTP request: one sample each, or with openai.n the samples of one
// problem in this batch (their bodies are the same; the sample index tells their keys apart).
std::vector<std::vector<size_t>> group_requests(const dicebench_model& model, const dicebench_generation_request* requests,
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

dicebench_status openai_generate(dicebench_model* model, const dicebench_generation_request* requests, size_t count,
                                 dicebench_result_sink sink, void* user, dicebench_error* error) {
  return sdk::guard(error, [&] {
    std::vector<Prepared> prepared;
    std::vector<size_t> unanswered;  // indices into requests
    for (size_t i = 0; i < count; ++i) {
      prepared.push_back(prepare_request(*model, requests[i]));
      if (model->cache) {
        if (auto hit = model->cache->find(prepared[i].key)) {
          auto read = read_reply(hit->body, hit->choice);
          if (auto* answer = std::get_if<ChatAnswer>(&read)) {
            emit(sink, user, i, answer->completion, answer_stats(*answer, hit->seconds, 0, true, prepared[i].key));
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
      emit(sink, user, i, "", s);
    };
    // Sends the groups; returns the requests a reply held no choice for (a server ignoring "n").
    const auto send_groups = [&](const std::vector<std::vector<size_t>>& groups, std::vector<size_t>& short_of_choices) {
      std::vector<HttpRequest> http;
      for (const auto& group : groups)
        http.push_back({model->settings.base_url + "/chat/completions", with_n(prepared[group.front()].body, group.size())});
      const auto on_reply = [&](size_t g, HttpReply&& reply) {
        const std::vector<size_t>& group = groups[g];
        const std::string tries = reply.attempts > 1 ? " after " + std::to_string(reply.attempts) + " attempts" : "";
        std::string failure;
        if (reply.status == 0) {
          failure = "no reply from " + model->settings.base_url + tries + ": " + reply.transport_error;
        } else if (reply.status < 200 || reply.status >= 300) {
          failure = "HTTP " + std::to_string(reply.status) + " from the server" + tries + ": " + error_message(reply.body);
        } else if (auto first = read_reply(reply.body, 0); std::holds_alternative<std::string>(first)) {
          failure = std::get<std::string>(first);
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
              model->cache->store(prepared[i].key, model->settings.base_url, model->settings.model,
                                  requests[i].sample_index, http[g].body, {reply.body, reply.seconds, j});
            emit(sink, user, i, answer->completion,
                 answer_stats(*answer, reply.seconds, reply.attempts, false, prepared[i].key));
          } else {
            fail(i, std::get<std::string>(read), reply);
          }
        }
      };
      return send_all(http, transfer_settings(*model), [&] { return model->host.cancelled(); }, on_reply);
    };
    std::vector<size_t> short_of_choices;
    bool finished = send_groups(group_requests(*model, requests, unanswered), short_of_choices);
    if (finished && !short_of_choices.empty()) {
      model->host.log(DICEBENCH_LOG_INFO, "openai: the server gave fewer choices than \"n\" asked for; asking for " +
                                              std::to_string(short_of_choices.size()) + " sample(s) one by one");
      std::vector<std::vector<size_t>> singles;
      for (const size_t i : short_of_choices) singles.push_back({i});
      std::vector<size_t> still_short;
      finished = send_groups(singles, still_short);
      for (const size_t i : still_short) fail(i, "the server's reply holds no choice", HttpReply{});
    }
    if (!finished) {
      sdk::set_error(error, "openai: cancelled");
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
};

const dicebench_provided_name kProvides[] = {
    {sdk::str("openai:"),
     sdk::str("a model served behind an OpenAI-compatible chat-completions API (vLLM, SGLang, OpenAI, ...)")},
};

const dicebench_plugin_descriptor kDescriptor =
    sdk::descriptor(DICEBENCH_KIND_MODEL, "openai", DICEBENCH_VERSION, DICEBENCH_GIT_SHA, kProvides, &kApi);

}  // namespace

DICEBENCH_PLUGIN_ENTRY(kDescriptor)
