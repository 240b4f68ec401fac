// The reward service behind `dicebench serve`: one host's evaluation session (every GPU) behind
// HTTP routes, as trainers call it.
//   POST /v1/evaluate          one item; waits up to its timeout, then answers 202 with a job id
//   POST /v1/evaluate/batch    items; results in input order (wait=false: a job id at once)
//   GET  /v1/jobs/{id}         a job's progress, and its results once done
//   POST /v1/openrlhf          OpenRLHF's remote reward: {query, prompts, labels} -> {rewards, scores, extra_logs}
//   GET  /health, /v1/workers, /metrics (Prometheus text)
// An item is {id, problem (a source, or a suite id such as kernelbench/level2/40), candidate (code)
// or completion (raw model output)}; a request may ask for a reward {shape, params}. Every
// judgement is stored in the results database under its id, which answers that id again (retries
// are safe, across restarts too), and an id still being judged is waited for, never judged twice.
// Items accepted and not yet judged are capped: beyond, 429 with Retry-After. A bearer token is
// checked where one is set. drain() refuses new work (503) and waits for what was accepted.
#pragma once

#include "core/serve/http_server.hpp"
#include "dicebench/evaluation.hpp"
#include "results/store/store.hpp"

#include <memory>
#include <optional>
#include <string>

namespace dicebench::serve {

struct ServiceSettings {
  std::optional<Session::Reward> reward;  // for requests that ask for none (and OpenRLHF's)
  std::string token;                      // a request must bear it (none: no check)
  std::size_t max_pending = 4096;         // items accepted and not yet judged
  std::size_t max_batch = 4096;           // items in one request
  double wait_s = 900;                    // how long a request waits for its results by default
  std::string fingerprint;  // the evaluation settings' fingerprint: stored judgements of others are not answers
};

class RewardService {
 public:
  // `session` and `store` outlive the service.
  RewardService(Session& session, results::Store& store, ServiceSettings settings);
  ~RewardService();
  RewardService(const RewardService&) = delete;
  RewardService& operator=(const RewardService&) = delete;

  HttpResponse handle(const HttpRequest& request);
  // Refuses new work from now on and returns once everything accepted is judged and stored.
  void drain();
  // One line of what the last interval saw (items judged and answered from the store, verdicts,
  // latency, pending), for the log; resets the interval.
  std::string interval_summary();

  struct State;  // defined in reward_service.cpp

 private:
  std::unique_ptr<State> state_;
};

}  // namespace dicebench::serve
