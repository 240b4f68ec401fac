// One evaluation session for `dicebench run`, `dicebench eval` and dicebench.evaluate(): the [eval]
// settings and slots resolved once from a Config, the candidate sandbox and the modules the suite's
// candidates import checked before anything runs, the suite's review of each candidate, and one
// warm evaluator per slot (a GPU, or a CPU worker) kept between calls, which batches of candidates
// share out. The one evaluation loop: every entry point hands its pairs to evaluate(), and gets
// each result through a callback as it is final (a run stores it and counts it there) or all of
// them in input order. On a Ray cluster (eval.ray: run --ray, serve --ray) that one slot is the
// cluster's evaluator pool (ray_pool.hpp).
#pragma once

#include "core/base/problem_key.hpp"
#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "core/host/host_services.hpp"
#include "core/host/suite_session.hpp"
#include "core/run/evaluation_caches.hpp"
#include "core/run/ray_pool.hpp"
#include "core/spec/vocabulary.hpp"
#include "harness/client/evaluator.hpp"
#include "results/store/store.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dicebench::run {

// What reading a candidate finds (the suite's review): flags with their details.
using ReviewFindings = std::vector<std::pair<EvaluationFlag, std::string>>;

// A suite the session opened itself (eval --suite, evaluate(suite=...)), with what it lives on.
struct OwnedSuite {
  std::unique_ptr<host::Config> config;
  std::unique_ptr<host::HostServices> services;
  std::optional<host::SuiteSession> session;
};

// Where a session's workers come from when not beside this executable (the Python module's).
struct WorkerOverride {
  std::string worker;   // dicebench-worker; its sandbox and compile helpers beside it
  int warm_spares = 0;  // candidate workers each evaluator keeps started between calls
};

// The evaluation of a completion in which the suite's extraction found no candidate.
Evaluation extraction_failed_evaluation(const std::string& device);

class EvaluationSession {
 public:
  // Resolves `config`'s evaluation settings and slots, checks the sandbox (refused under
  // eval.sandbox=require; sandbox_summary() says which protections candidates get), and checks that the workers' Python
  // has the modules the suite's candidates import. `suite` (none: no review, no modules) must outlive the session.
  static Result<std::unique_ptr<EvaluationSession>> open(const host::Config& config, const host::SuiteSession* suite,
                                                         const std::optional<WorkerOverride>& workers = std::nullopt);
  // The same with the suite named by config's "suite" (none when unset), opened with config's
  // settings from the installed plugins (and those of the workers' install, when given); with
  // config's "db", the baselines, traits and bandwidths runs stored there are read (never written)
  // before a slot judges a problem, as a run's slots read them (eval --db, Evaluator(db=...)).
  static Result<std::unique_ptr<EvaluationSession>> open_with_suite(
      const host::Config& config, const std::optional<WorkerOverride>& workers = std::nullopt);
  ~EvaluationSession();
  EvaluationSession(const EvaluationSession&) = delete;
  EvaluationSession& operator=(const EvaluationSession&) = delete;

  const harness::EvaluationSettings& settings() const { return settings_; }
  const std::vector<std::optional<std::string>>& slots() const { return slots_; }
  const std::string& sandbox_json() const { return sandbox_json_; }
  const std::string& sandbox_summary() const { return sandbox_summary_; }
  const std::string& suite_name() const;  // "" without a suite
  // The Ray pool the session judges on (eval.ray), as RayPool::description() says; "" when local.
  std::string ray_pool_description() const { return ray_pool_ ? ray_pool_->description() : ""; }

  // The suite's review of `candidate` for `problem` (nothing without a suite); for a problem it
  // lacks (none), its review of candidates for problems given as their source. May be called from
  // several threads at once; it reads, never runs, the candidate.
  Result<ReviewFindings> review(const std::optional<ProblemKey>& problem, const std::string& problem_source,
                                const std::string& candidate) const;
  // The suite's problem whose text hashes to `problem_hash` ("sha256:..."), if any.
  std::optional<ProblemKey> problem_key(const std::string& problem_hash) const;
  // The suite the session reviews with (none without one).
  const host::SuiteSession* suite() const { return suite_; }

  // A (problem source, candidate source) pair; `problem` is the suite's problem it is of where the
  // caller knows (a run's sample), else the suite's problem with its text, if any (a problem the
  // suite lacks is judged too, with the suite's review of foreign problems).
  struct Pair {
    std::string problem_source, candidate_source;
    std::optional<ProblemKey> problem{};
  };
  // Called in a slot's thread, exactly once per pair, as its result is final: the pair's index in the
  // batch and its evaluation (with the suite's review among its flags), or an error: the harness's
  // own failure, (with a suite) a problem that is not one of the suite's, or the batch stopping
  // before the pair was judged. A candidate's failures are verdicts.
  using OnResult = std::function<void(size_t index, Result<Evaluation> result)>;
  // Evaluates `batch` on every slot, each slot's evaluator keeping its prefetch room full, and
  // returns once every pair has had its on_result. `stopping` (checked while the batch waits):
  // pairs not yet judged end as errors. Calls from several threads share the slots.
  void evaluate(const std::vector<Pair>& batch, const OnResult& on_result, const std::function<bool()>& stopping = {});
  // The same, the results in input order.
  std::vector<Result<Evaluation>> evaluate(const std::vector<Pair>& batch);

  // The results store whose baselines, traits and bandwidths a slot gives its evaluator before it
  // judges a problem, and (writable) where what an evaluation measured is stored for later runs;
  // `lock` guards the store (its owner's writes take it too). A run's store (writable), or eval's
  // and the Python module's --db (read only, opened by open_with_suite).
  void use_store(results::Store& store, std::mutex& lock, bool writable);

  // Baselines other sessions' evaluators timed (a Ray pool's actors, handed over by the pool): a
  // slot gives its evaluator the one under its problem's key before judging the problem, as it
  // gives a stored one (EvaluationCaches::prime; the store's comes first). From the first call on,
  // the baselines this session's evaluators time are kept for measured_baselines().
  void prime_baselines(const std::vector<SharedBaseline>& baselines);
  // The baselines this session's evaluators timed since the last call (none before prime_baselines).
  std::vector<SharedBaseline> measured_baselines();

  // Evaluators started so far (each starts a reference worker): one per slot for the session's life.
  size_t evaluators_started() const { return evaluators_started_; }
  // Waits for calls in progress, then ends every worker; later calls fail.
  void close();
  bool closed() {
    std::lock_guard guard(mutex_);
    return closed_;
  }

 private:
  EvaluationSession() = default;
  struct Batch;
  struct Job;
  // open() on a Ray cluster (eval.ray): the pool's bridge is its one slot.
  static Result<std::unique_ptr<EvaluationSession>> open_on_ray(const host::RaySettings& ray,
                                                                const host::Config& config,
                                                                harness::EvaluationSettings settings,
                                                                const host::SuiteSession* suite);
  void start_slots();
  void run_slot(size_t index, const std::optional<std::string>& slot);
  // The slot's loop over its evaluator: a harness::Evaluator, or the Ray pool (RayPool).
  template <class SlotEvaluator>
  void judge_on(size_t index, const std::optional<std::string>& slot, SlotEvaluator& evaluator);
  // A job a slot took that its device has not begun, while it waits behind a long one: another
  // slot, idle, takes it over (under mutex_).
  Job* take_over(size_t index);

  harness::EvaluationSettings settings_;
  std::map<std::string, std::shared_ptr<harness::DeviceGate>> device_gates_;  // by GPU, where slots share one
  std::vector<std::optional<std::string>> slots_;
  std::string sandbox_json_, sandbox_summary_;
  const host::SuiteSession* suite_ = nullptr;
  OwnedSuite owned_suite_;
  std::unique_ptr<RayPool> ray_pool_;          // on a Ray cluster (eval.ray): the one slot's evaluator
  std::optional<results::Store> owned_store_;  // read-only: the caches runs stored (--db)
  results::Store* cache_store_ = nullptr;      // owned_store_, or the run's
  std::mutex owned_store_lock_;
  std::mutex* cache_lock_ = &owned_store_lock_;  // for cache_store_ and caches_
  bool store_measured_ = false;                  // what evaluations measured goes to cache_store_
  EvaluationCaches caches_;
  std::atomic<bool> sharing_baselines_{false};  // prime_baselines was called: slots prime, measured ones are kept

  std::mutex mutex_;                 // guards what follows
  std::condition_variable changed_;  // a job queued or finished, or the session closing
  std::deque<Job*> queue_;           // jobs no slot has taken
  // Jobs a slot took and has not finished, by id: which slot holds each, whether its worker has
  // started there and whether its device has begun it; and since when each slot's device has been
  // on the candidate it judges.
  struct Held {
    Job* job = nullptr;
    size_t slot = 0;
    bool launched = false;
    bool started = false;
    std::chrono::steady_clock::time_point since;
  };
  std::map<uint64_t, Held> held_;
  std::vector<std::optional<std::chrono::steady_clock::time_point>> busy_since_;
  uint64_t next_job_id_ = 0;
  std::vector<std::thread> threads_;  // one per slot, started by the first evaluate()
  bool closed_ = false;
  std::atomic<size_t> evaluators_started_{0};
};

}  // namespace dicebench::run
