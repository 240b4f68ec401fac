// The reward service's routes, jobs, admission and store (reward_service.hpp).
#include "core/serve/reward_service.hpp"

#include "core/base/sha256.hpp"
#include "core/host/log.hpp"
#include "dicebench/openrlhf.hpp"
#include "results/store/judgements.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace dicebench::serve {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

constexpr std::size_t kRunners = 128;     // jobs judged at once (each waits on the session's slots)
constexpr std::size_t kJobsKept = 10000;  // finished jobs GET /v1/jobs still answers
constexpr std::size_t kMaxIdBytes = 256;

// One item's result, shared by every request that asked for its id.
struct Pending {
  std::optional<Judgement> result;
  bool from_store = false;
};

struct Job {
  std::string id;
  std::vector<std::shared_ptr<Pending>> items;  // in the request's order
  std::optional<Session::Reward> reward;
  std::vector<Session::Item> to_judge;  // the items judged for this job (not stored, not in flight elsewhere)
  std::vector<std::shared_ptr<Pending>> judged_into;
  Clock::time_point created = Clock::now();
  std::optional<std::vector<Judgement>> final;  // with rewards, once every item has its result
};

HttpResponse json_response(int status, const json& body) {
  return {status, body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", "application/json", {}};
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, {{"error", message}});
}

// Compares a presented credential with the token in time that depends on the length only.
bool constant_time_equal(const std::string& presented, const std::string& expected) {
  if (presented.size() != expected.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) diff |= static_cast<unsigned char>(presented[i] ^ expected[i]);
  return diff == 0;
}

// The reward a request asks for: {"shape": ..., "params": {...}}.
Result<std::optional<Session::Reward>> reward_of(Session& session, const json& body,
                                                 const std::optional<Session::Reward>& fallback) {
  if (!body.contains("reward") || body["reward"].is_null()) return fallback;
  const json& r = body["reward"];
  if (!r.is_object() || !r.contains("shape") || !r["shape"].is_string())
    return make_error(ErrorKind::bad_input, "reward must be {\"shape\": NAME, \"params\": {NAME: NUMBER}}");
  Session::Reward reward{r["shape"].get<std::string>(), {}};
  if (r.contains("params")) {
    if (!r["params"].is_object()) return make_error(ErrorKind::bad_input, "reward.params must be an object of numbers");
    for (const auto& [name, value] : r["params"].items()) {
      if (!value.is_number())
        return make_error(ErrorKind::bad_input, fmt::format("reward.params.{} is not a number", name));
      reward.params[name] = value.get<double>();
    }
  }
  // An unknown shape or parameter, or one the session cannot give, is the request's error.
  DICEBENCH_TRY(session.judge({}, reward, [](std::size_t, Judgement) {}));
  return std::optional(std::move(reward));
}

Result<Session::Item> item_of(const json& j) {
  if (!j.is_object()) return make_error(ErrorKind::bad_input, "an item is an object");
  for (const auto& [key, value] : j.items())
    if (key != "id" && key != "problem" && key != "candidate" && key != "completion")
      return make_error(ErrorKind::bad_input,
                        fmt::format("an item has no field {:?} (id, problem, candidate, completion)", key));
  Session::Item item;
  if (j.contains("id")) {
    if (!j["id"].is_string() || j["id"].get<std::string>().empty() || j["id"].get<std::string>().size() > kMaxIdBytes)
      return make_error(ErrorKind::bad_input, fmt::format("an item's id is a string of 1 to {} bytes", kMaxIdBytes));
    item.id = j["id"].get<std::string>();
  }
  if (!j.contains("problem") || !j["problem"].is_string())
    return make_error(ErrorKind::bad_input,
                      "an item needs a problem: its source, or a suite id such as kernelbench/level2/40");
  item.problem = j["problem"].get<std::string>();
  const bool code = j.contains("candidate"), raw = j.contains("completion");
  if (code == raw)
    return make_error(ErrorKind::bad_input,
                      "an item has a candidate (code) or a completion (raw model output), one of them");
  const json& text = code ? j["candidate"] : j["completion"];
  if (!text.is_string()) return make_error(ErrorKind::bad_input, "an item's candidate or completion is a string");
  item.candidate = text.get<std::string>();
  item.completion = raw;
  return item;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

}  // namespace

struct RewardService::State {
  Session& session;
  results::Store& store;
  ServiceSettings settings;
  std::mutex store_lock;  // the store's one connection

  std::mutex mutex;  // guards what follows
  std::condition_variable changed;
  std::map<std::string, std::shared_ptr<Pending>> in_flight;  // by item id
  std::map<std::string, std::shared_ptr<Job>> jobs;
  std::deque<std::string> job_order;
  std::deque<std::shared_ptr<Job>> queue;  // jobs no runner took yet
  std::vector<std::thread> runners;
  std::size_t pending = 0, running_jobs = 0;
  std::uint64_t next_job = 0, next_item = 0;
  bool draining = false, ending = false;
  std::atomic<bool> warned_prompt_missing = false;  // an OpenRLHF query without its prompt, said once
  // What /metrics counts, and the interval's share for the log line.
  std::map<std::string, std::uint64_t> verdicts, statuses, responses;
  std::uint64_t judged = 0, from_store = 0, shared_in_flight = 0;
  double item_seconds = 0;
  std::uint64_t interval_judged = 0, interval_from_store = 0;
  std::map<std::string, std::uint64_t> interval_verdicts;
  std::vector<double> interval_latency;

  State(Session& s, results::Store& st, ServiceSettings set) : session(s), store(st), settings(std::move(set)) {}

  double mean_item_seconds() const { return judged ? item_seconds / static_cast<double>(judged) : 5.0; }

  // A runner: takes jobs and judges their items through the session.
  void run_jobs() {
    while (true) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return ending || !queue.empty(); });
        if (queue.empty()) return;
        job = queue.front();
        queue.pop_front();
        ++running_jobs;
      }
      std::vector<char> answered(job->to_judge.size(), 0);
      auto judged_all = session.judge(job->to_judge, std::nullopt, [&](std::size_t index, Judgement judgement) {
        answered[index] = 1;
        finish(*job, index, std::move(judgement));
      });
      if (!judged_all)  // the session refused the whole call (closed): each item is told so
        for (std::size_t i = 0; i < answered.size(); ++i)
          if (!answered[i]) {
            Judgement failed;
            failed.id = job->to_judge[i].id;
            failed.status = ItemStatus::harness_failed;
            failed.error = judged_all.error().message;
            finish(*job, i, std::move(failed));
          }
      std::lock_guard guard(mutex);
      --running_jobs;
      changed.notify_all();
    }
  }

  // One judged item: stored (a harness failure or cancellation is not: asking again judges it),
  // then handed to every request waiting on its id.
  void finish(Job& job, std::size_t index, Judgement judgement) {
    const double seconds = std::chrono::duration<double>(Clock::now() - job.created).count();
    if (judgement.status == ItemStatus::judged || judgement.status == ItemStatus::problem_failed) {
      std::lock_guard guard(store_lock);
      if (auto stored = results::put_judgement(store, judgement, settings.fingerprint); !stored)
        host::log_warn("serve: {}", stored.error().message);
    }
    std::lock_guard guard(mutex);
    ++statuses[std::string(item_status_name(judgement.status))];
    if (judgement.evaluation) {
      const std::string verdict(verdict_name(judgement.evaluation->verdict));
      ++verdicts[verdict];
      ++interval_verdicts[verdict];
    }
    ++judged;
    ++interval_judged;
    item_seconds += seconds;
    interval_latency.push_back(seconds);
    in_flight.erase(judgement.id);
    job.judged_into[index]->result = std::move(judgement);
    --pending;
    changed.notify_all();
  }

  // Registers a job for `items`: stored answers and ids in flight are shared, the rest queued.
  // An HTTP error for a draining server or one with no room.
  Result<std::shared_ptr<Job>> submit(std::vector<Session::Item> items, std::optional<Session::Reward> reward,
                                      HttpResponse& refusal) {
    auto job = std::make_shared<Job>();
    job->reward = std::move(reward);
    // What the store holds is read before the lock (an id judged before is its answer).
    std::vector<std::optional<Judgement>> stored(items.size());
    {
      std::lock_guard guard(store_lock);
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (items[i].id.empty()) continue;
        auto found = results::find_judgement(store, items[i].id, settings.fingerprint);
        if (!found) return found.error();
        stored[i] = std::move(*found);
      }
    }
    std::lock_guard guard(mutex);
    if (draining) {
      refusal = error_response(503, "the server is draining; send this to another");
      refusal.headers.emplace_back("Retry-After", "30");
      return make_error(ErrorKind::cancelled, "draining");
    }
    std::size_t fresh = 0;
    for (std::size_t i = 0; i < items.size(); ++i)
      if (!stored[i] && !(items[i].id.size() && in_flight.count(items[i].id))) ++fresh;
    if (pending + fresh > settings.max_pending) {
      const double wait = pending * mean_item_seconds() / static_cast<double>(std::max<std::size_t>(session.size(), 1));
      refusal = error_response(429, fmt::format("{} items are waiting to be judged (at most {}); try again later",
                                                pending, settings.max_pending));
      refusal.headers.emplace_back("Retry-After",
                                   std::to_string(std::clamp(static_cast<int>(std::ceil(wait)), 1, 600)));
      return make_error(ErrorKind::cancelled, "full");
    }
    job->id = fmt::format("job-{}", ++next_job);
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto& item = items[i];
      if (stored[i]) {
        job->items.push_back(std::make_shared<Pending>(Pending{std::move(stored[i]), true}));
        ++from_store;
        ++interval_from_store;
        continue;
      }
      if (item.id.empty()) item.id = fmt::format("{}-{}", job->id, i);
      if (const auto it = in_flight.find(item.id); it != in_flight.end()) {
        job->items.push_back(it->second);
        ++shared_in_flight;
        continue;
      }
      auto slot = std::make_shared<Pending>();
      in_flight[item.id] = slot;
      job->items.push_back(slot);
      job->judged_into.push_back(slot);
      job->to_judge.push_back(std::move(item));
      ++pending;
    }
    jobs[job->id] = job;
    job_order.push_back(job->id);
    while (job_order.size() > kJobsKept) {
      jobs.erase(job_order.front());
      job_order.pop_front();
    }
    if (!job->to_judge.empty()) queue.push_back(job);
    changed.notify_all();
    return job;
  }

  // The job's judgements with its reward once every item has its result (under mutex); the
  // rewards are stored with them.
  const std::vector<Judgement>* final(Job& job) {
    if (job.final) return &*job.final;
    for (const auto& item : job.items)
      if (!item->result) return nullptr;
    std::vector<Judgement> out;
    for (std::size_t i = 0; i < job.items.size(); ++i) {
      Judgement j = *job.items[i]->result;
      j.reward.reset();
      j.reward_shape.clear();
      j.reward_params = json::object();
      out.push_back(std::move(j));
    }
    if (job.reward) {
      (void)apply_reward(out, *job.reward);  // checked when the request came
      std::lock_guard guard(store_lock);
      for (const auto& j : out)
        if (j.reward)
          if (auto stored = results::put_judgement(store, j, settings.fingerprint); !stored)
            host::log_warn("serve: {}", stored.error().message);
    }
    job.final = std::move(out);
    return &*job.final;
  }

  json progress(Job& job, const std::vector<Judgement>* done) {
    std::size_t finished = 0;
    for (const auto& item : job.items) finished += item->result ? 1 : 0;
    json out = {
        {"job", job.id}, {"status", done ? "done" : "running"}, {"done", finished}, {"total", job.items.size()}};
    if (done) out["results"] = *done;
    return out;
  }

  // Waits up to `wait_s` for the job: its final judgements, or none yet.
  const std::vector<Judgement>* wait(Job& job, double wait_s, std::unique_lock<std::mutex>& lock) {
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s));
    const std::vector<Judgement>* done = nullptr;
    changed.wait_until(lock, deadline, [&] { return (done = final(job)) != nullptr; });
    return done;
  }
};

RewardService::RewardService(Session& session, results::Store& store, ServiceSettings settings)
    : state_(std::make_unique<State>(session, store, std::move(settings))) {
  for (std::size_t i = 0; i < kRunners; ++i) state_->runners.emplace_back([this] { state_->run_jobs(); });
}

RewardService::~RewardService() {
  drain();
  {
    std::lock_guard guard(state_->mutex);
    state_->ending = true;
    state_->changed.notify_all();
  }
  for (auto& runner : state_->runners) runner.join();
}

void RewardService::drain() {
  std::unique_lock lock(state_->mutex);
  state_->draining = true;
  state_->changed.wait(lock,
                       [&] { return state_->pending == 0 && state_->queue.empty() && state_->running_jobs == 0; });
}

std::string RewardService::interval_summary() {
  std::lock_guard guard(state_->mutex);
  State& s = *state_;
  std::string verdicts;
  for (const auto& [name, count] : s.interval_verdicts)
    verdicts += fmt::format("{}{} {}", verdicts.empty() ? "" : ", ", count, name);
  auto line =
      fmt::format("serve: {} judged ({}), {} answered from the store; latency p50 {:.1f} s, p99 {:.1f} s; {} pending{}",
                  s.interval_judged, verdicts.empty() ? "none" : verdicts, s.interval_from_store,
                  percentile(s.interval_latency, 0.5), percentile(s.interval_latency, 0.99), s.pending,
                  s.draining ? "; draining" : "");
  s.interval_judged = s.interval_from_store = 0;
  s.interval_verdicts.clear();
  s.interval_latency.clear();
  return line;
}

HttpResponse RewardService::handle(const HttpRequest& request) {
  State& s = *state_;
  const auto answer = [&](HttpResponse response) {
    std::lock_guard guard(s.mutex);
    ++s.responses[std::to_string(response.status)];
    return response;
  };
  const std::string path = request.target.substr(0, request.target.find('?'));
  if (path == "/health" && request.method == "GET") {
    std::lock_guard guard(s.mutex);
    return json_response(200, {{"status", s.draining ? "draining" : "ok"},
                               {"device", s.session.device()},
                               {"slots", s.session.size()},
                               {"suite", s.session.suite()},
                               {"ray_pool", s.session.ray_pool()},
                               {"sandbox", json::parse(s.session.sandbox_json())}});
  }
  if (!s.settings.token.empty() && !constant_time_equal(request.authorization, "Bearer " + s.settings.token)) {
    auto refused = error_response(401, "this server needs its bearer token: Authorization: Bearer TOKEN");
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    return answer(refused);
  }
  if (path == "/metrics" && request.method == "GET") {
    std::lock_guard guard(s.mutex);
    std::string out;
    const auto metric = [&](const char* name, const char* type, const char* help) {
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    };
    metric("dicebench_items_total", "counter", "Items answered, by where the answer came from");
    out += fmt::format("dicebench_items_total{{source=\"judged\"}} {}\n", s.judged);
    out += fmt::format("dicebench_items_total{{source=\"store\"}} {}\n", s.from_store);
    out += fmt::format("dicebench_items_total{{source=\"in_flight\"}} {}\n", s.shared_in_flight);
    metric("dicebench_item_status_total", "counter", "Judged items by status");
    for (const auto& [name, count] : s.statuses)
      out += fmt::format("dicebench_item_status_total{{status=\"{}\"}} {}\n", name, count);
    metric("dicebench_verdicts_total", "counter", "Judged items by verdict");
    for (const auto& [name, count] : s.verdicts)
      out += fmt::format("dicebench_verdicts_total{{verdict=\"{}\"}} {}\n", name, count);
    metric("dicebench_item_seconds_total", "counter", "Seconds from an item's request to its judgement, summed");
    out += fmt::format("dicebench_item_seconds_total {}\n", s.item_seconds);
    metric("dicebench_responses_total", "counter", "HTTP responses by status code");
    for (const auto& [code, count] : s.responses)
      out += fmt::format("dicebench_responses_total{{code=\"{}\"}} {}\n", code, count);
    metric("dicebench_pending_items", "gauge", "Items accepted and not yet judged");
    out += fmt::format("dicebench_pending_items {}\n", s.pending);
    metric("dicebench_slots", "gauge", "Evaluation slots (GPUs, or CPU workers)");
    out += fmt::format("dicebench_slots {}\n", s.session.size());
    metric("dicebench_draining", "gauge", "1 while the server drains before it stops");
    out += fmt::format("dicebench_draining {}\n", s.draining ? 1 : 0);
    return {200, out, "text/plain; version=0.0.4", {}};
  }
  if (path == "/v1/workers" && request.method == "GET") {
    json workers;
    {
      std::lock_guard guard(s.mutex);
      workers = {{"device", s.session.device()},
                 {"slots", s.session.size()},
                 {"evaluators_started", s.session.evaluators_started()},
                 {"ray_pool", s.session.ray_pool()},
                 {"pending_items", s.pending},
                 {"jobs_running", s.running_jobs},
                 {"jobs_queued", s.queue.size()},
                 {"draining", s.draining}};
    }
    return answer(json_response(200, workers));
  }
  if (path.starts_with("/v1/jobs/") && request.method == "GET") {
    std::optional<json> progress;
    {
      std::lock_guard guard(s.mutex);
      if (const auto it = s.jobs.find(path.substr(std::string_view("/v1/jobs/").size())); it != s.jobs.end())
        progress = s.progress(*it->second, s.final(*it->second));
    }
    if (!progress) return answer(error_response(404, "no such job (finished jobs are kept for a while, not forever)"));
    return answer(json_response(200, *progress));
  }
  const bool single = path == "/v1/evaluate", batch = path == "/v1/evaluate/batch", openrlhf = path == "/v1/openrlhf";
  if (!single && !batch && !openrlhf)
    return answer(error_response(404, fmt::format("no route {} {}", request.method, path)));
  if (request.method != "POST") return answer(error_response(405, fmt::format("{} takes POST", path)));
  json body;
  try {
    body = json::parse(request.body);
  } catch (const json::exception&) {
    return answer(error_response(400, "the body is not JSON"));
  }
  if (!body.is_object()) return answer(error_response(400, "the body is a JSON object"));
  std::vector<Session::Item> items;
  std::optional<Session::Reward> reward = s.settings.reward;
  double wait_s = s.settings.wait_s;
  bool wait = true;
  if (openrlhf) {
    // OpenRLHF's remote reward: the response is each query past its prompt; the label is the problem.
    for (const char* key : {"query", "prompts", "labels"})
      if (!body.contains(key) || !body[key].is_array())
        return answer(error_response(400, fmt::format("OpenRLHF's body has {} as a list", key)));
    const auto &queries = body["query"], &prompts = body["prompts"], &labels = body["labels"];
    if (prompts.size() != queries.size() || labels.size() != queries.size())
      return answer(error_response(400, "query, prompts and labels differ in length"));
    if (!reward) reward = Session::Reward{"correctness", {}};
    for (std::size_t i = 0; i < queries.size(); ++i) {
      if (!queries[i].is_string() || !prompts[i].is_string() || !labels[i].is_string())
        return answer(error_response(400, "query, prompts and labels hold strings"));
      const auto found = openrlhf_response(queries[i].get<std::string>(), prompts[i].get<std::string>());
      if (!found.prompt_found && !s.warned_prompt_missing.exchange(true))
        host::log_warn(
            "an OpenRLHF query does not hold its prompt; it is judged whole (a code block of the "
            "prompt's could be judged instead of the response's)");
      const std::string& response = found.text;
      const std::string label = labels[i].get<std::string>();
      items.push_back({"openrlhf-" + sha256_hex(label + '\0' + response), label, response, true});
    }
  } else {
    if (body.contains("reward")) {
      auto asked = reward_of(s.session, body, reward);
      if (!asked) return answer(error_response(400, asked.error().message));
      reward = std::move(*asked);
    }
    if (body.contains("timeout_s")) {
      if (!body["timeout_s"].is_number() || !(body["timeout_s"].get<double>() >= 0) ||
          body["timeout_s"].get<double>() > 86400)
        return answer(error_response(400, "timeout_s is seconds from 0 to 86400"));
      wait_s = body["timeout_s"].get<double>();
    }
    if (batch) {
      if (body.contains("wait") && !body["wait"].is_boolean())
        return answer(error_response(400, "wait is true or false"));
      wait = body.value("wait", true);
      if (!body.contains("items") || !body["items"].is_array())
        return answer(error_response(400, "the body has items: a list"));
      if (body["items"].size() > s.settings.max_batch)
        return answer(error_response(
            413, fmt::format("{} items in one request; at most {}", body["items"].size(), s.settings.max_batch)));
      for (const auto& j : body["items"]) {
        auto item = item_of(j);
        if (!item) return answer(error_response(400, item.error().message));
        items.push_back(std::move(*item));
      }
    } else {
      json single_item = body;
      for (const char* key : {"reward", "timeout_s"}) single_item.erase(key);
      auto item = item_of(single_item);
      if (!item) return answer(error_response(400, item.error().message));
      items.push_back(std::move(*item));
    }
  }
  HttpResponse refusal;
  auto job = s.submit(std::move(items), reward, refusal);
  if (!job) return answer(refusal.status != 200 ? refusal : error_response(500, job.error().message));
  const auto started = Clock::now();
  std::unique_lock lock(s.mutex);
  const auto* done = wait ? s.wait(**job, wait_s, lock) : s.final(**job);
  host::log_info("serve: {} {} item(s) -> {} in {:.1f} s", path, (*job)->items.size(), done ? "done" : (*job)->id,
                 std::chrono::duration<double>(Clock::now() - started).count());
  if (openrlhf) {
    if (!done) {
      auto later = error_response(503, "not judged yet; ask again with the same body (its items keep being judged)");
      later.headers.emplace_back("Retry-After", "10");
      ++s.responses["503"];
      return later;
    }
    json rewards = json::array(), correct = json::array();
    for (const auto& j : *done) {
      rewards.push_back(j.reward.value_or(0.0));
      correct.push_back(j.evaluation && j.evaluation->verdict == Verdict::correct ? 1.0 : 0.0);
    }
    ++s.responses["200"];
    return json_response(200, {{"rewards", rewards}, {"scores", rewards}, {"extra_logs", {{"correct", correct}}}});
  }
  const int status = done ? 200 : 202;
  ++s.responses[std::to_string(status)];
  if (single && done) return json_response(200, json(done->front()));
  return json_response(status, s.progress(**job, done));
}

}  // namespace dicebench::serve
