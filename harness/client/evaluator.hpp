// Evaluates candidates against their problems through isolated workers: a long-lived reference
// worker builds the reference, makes each trial's inputs from secret seeds, keeps that trial's
// reference outputs and compares; a fresh candidate worker per candidate compiles, runs and times
// ModelNew, trial by trial (inputs and outputs travel as CUDA IPC handles, or files on the CPU).
// Compile and run time limits kill the candidate's process group; a crash or timeout is charged
// to that candidate only. Submitted candidates start and compile on CPU cores ahead of the GPU
// (up to `prefetch` at once; a worker's start-up, mostly importing torch, takes seconds, a whole
// evaluation often less than one), and the GPU takes whichever has loaded first. Loading goes on
// while the GPU judges: the evaluator's waits on its workers launch queued submissions as places
// free up (kAheadPerPrefetch bounds what is held), so a caller submits ahead (wants_more) and a
// candidate that holds the GPU up to its time limit holds up no load. Calls that take torch's
// toolchain are built by a pool of their own (toolchain_builds.hpp) while the GPU judges the
// others, and so are the re-judges of fast-path failures. With warm_spares, that many
// candidate workers are kept started: they wait, torch imported, for whatever candidates come
// next (the Python module's calls, not known in advance).
#pragma once

#include "core/base/result.hpp"
#include "core/spec/evaluation.hpp"
#include "harness/client/device_gate.hpp"
#include "harness/client/once_per_key.hpp"
#include "harness/client/sandbox_launch.hpp"
#include "harness/client/toolchain_builds.hpp"
#include "harness/client/worker_process.hpp"

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::harness {

struct EvaluationSettings {
  std::string worker_executable;
  std::string device = "cpu";                       // "cpu" or "cuda"
  std::optional<std::string> visible_devices;       // the GPU this evaluator's workers use
  int trials = 5;                                   // correctness trials, fresh inputs each
  ToleranceMode tolerance = kAllToleranceModes[0];  // how close outputs must be (core/spec/vocabulary.toml)
  ModelMode model_mode = kAllModelModes[0];         // the mode reference and candidate run in
  uint64_t secret = 0;                              // per-run secret the input seeds derive from
  std::chrono::milliseconds compile_timeout{std::chrono::minutes(10)};   // start + load (compile)
  std::chrono::milliseconds candidate_timeout{std::chrono::minutes(5)};  // init + trials + timing
  std::chrono::milliseconds reference_timeout{
      std::chrono::minutes(10)};  // each reference request (settings: the longer of the two above)
  int warmup = 3, min_trials = 10, max_trials = 100;
  // target_rel_ci: timing stops once the median's 95% interval lies within this fraction of it
  // (eval.timing_spread; dicebench_timing.py argues the default).
  double budget_seconds = 10.0, target_rel_ci = 0.02;
  // Time a correct candidate and its baseline (eval.timing); off: correctness only, as DICE's
  // reward judges (KernelBench's measure_performance=False): no runtime, speedup or memory floor.
  bool timing = true;
  // An untimed call on fresh inputs of its own just before each timed call (eval.warm_calls).
  bool warm_calls = true;
  // Inputs (and kept outputs of checked calls) the reference makes ahead for a batch of timed calls
  // (eval.timing_batch); it also takes at most a quarter of the free memory, and never fewer than one call.
  int64_t batch_bytes = int64_t{4} << 30;
  std::string work_root;                                    // job folders go here (default: $TMPDIR)
  bool fastpath = true;                                     // compile load_inline calls with NVRTC (CUDA only)
  BaselineMethod baseline_method = kAllBaselineMethods[0];  // eager, or compile: the reference under torch.compile
  int prefetch = 4;                                         // candidate workers started ahead of the current one
  int warm_spares = 0;                                      // candidate workers kept started for the next calls
  std::string fastpath_cache;      // compile cache folder (default: $XDG_CACHE_HOME/dicebench/fastpath)
  SandboxSettings sandbox;         // around every candidate worker (sandbox_launch.hpp)
  std::string compile_executable;  // dicebench-compile, the fast path's trusted compile step
  bool keep_jobs = false;          // keep job folders (logs, inputs) after each evaluation
  double speedup_bound = 10.0;     // a larger speedup is flagged excessive_speedup (informative)
  // Bytes per second for the memory floor; 0: measured on the GPU by the reference worker (and none
  // on the CPU, where no floor applies unless this is set).
  double bandwidth = 0;
  // Re-judge a failing candidate built on the NVRTC fast path with torch's toolchain (the verdicts
  // of evaluator.cpp's fastpath_could_cause) before its verdict is kept.
  bool confirm_fastpath_failures = true;
  // torch's toolchain, for the load_inline calls the fast path declines and for re-judges: builds
  // run in a pool of their own (toolchain_builds.hpp), at most toolchain_jobs at once (0:
  // default_toolchain_jobs), each within toolchain_timeout, their outcomes
  // cached by content in toolchain_cache (default: $XDG_CACHE_HOME/dicebench/toolchain).
  int toolchain_jobs = 0;
  // A precompiled torch/extension.h for builds whose flags recur (toolchain_builds.hpp).
  bool toolchain_precompiled_headers = true;
  std::chrono::milliseconds toolchain_timeout{std::chrono::minutes(10)};
  std::string toolchain_cache;
  // One pool for several evaluators (one per GPU); made by the evaluator when not given.
  std::shared_ptr<ToolchainBuilds> toolchain_builds;
  // Baselines that evaluators on one device (a run's CPU slots) share, one timing per problem; none:
  // this evaluator times its own.
  std::shared_ptr<OncePerKey<Timing>> shared_baselines;
  // The GPU's gate when several evaluators share it (eval.gpu_slots): checks side by side, timing
  // and memory-bandwidth measurement with the GPU to themselves; none: this evaluator has it alone.
  std::shared_ptr<DeviceGate> device_gate;
};

// How timed calls get their inputs; part of the baseline cache's key (a baseline timed another way
// is not reused): fresh inputs for every call, an untimed warm call before each timed one.
inline constexpr const char* kTimingInputs = "fresh_inputs_warm";

// Builds with torch's toolchain at once where eval.toolchain_jobs leaves it open: half the cores, at
// least 1. A build keeps one to two cores busy (torch's two translation units, then the link). On the
// H100 host's 16 cores an RL step (256 candidates, 64 builds, timing off) took 328 s with 8 places
// and 446 s with 16 places at nice 10: the builds are its longest path, and twice as many at once
// made each take 2.5 times as long.
int default_toolchain_jobs(int cores);

// The niceness of toolchain builds while candidates are timed: a timed call's host time counts in
// its time, so a build on its core must yield to it. With timing off (correctness only: an RL
// reward) builds run at the candidates' priority, as nothing is timed and the builds are the
// step's longest path.
inline constexpr int kTimedBuildNiceness = 10;

// The toolchain pool's settings an evaluator with `settings` uses (a pool several evaluators share
// is made from them).
ToolchainBuildSettings toolchain_build_settings(const EvaluationSettings& settings);

// Submissions an evaluator holds ahead of its device, queued, loading or loaded, per prefetch place
// (those waiting on torch's toolchain and the one being judged aside): prefetch loading at most,
// and the rest loaded or queued to load while the device is busy. Twice prefetch loaded lets a
// device freed after a long evaluation (a candidate running to its time limit) judge those while
// the next prefetch load; more would add workers, each a process with torch imported (hundreds of
// MB of host memory, and a CUDA context on the GPU), that wait longer.
inline constexpr int kAheadPerPrefetch = 3;

class Evaluator {
 public:
  explicit Evaluator(EvaluationSettings settings);
  ~Evaluator();

  // A candidate to judge against a problem; `tag` is the caller's (a sample's id).
  struct Submission {
    int64_t tag = 0;
    std::string problem_source, problem_hash, candidate_source;
  };
  // Queues a submission. Workers start (and compile) in submission order, here, in next() and in
  // its waits on workers, while fewer than settings().prefetch are starting or compiling on the
  // fast path and fewer than ahead_limit() are starting, compiling or loaded; those waiting on
  // torch's toolchain (toolchain_builds.hpp) do not count, so a slow build never holds a place
  // that a candidate ready for the GPU could use.
  void submit(Submission submission);
  // Whether the caller should submit more now: fewer than ahead_limit() submissions are queued,
  // starting, compiling or loaded (so that next() has queued ones to start while the GPU is
  // busy), and fewer than toolchain_waiting_limit() wait on torch's toolchain.
  bool wants_more() const;
  // Submissions whose verdict is not final yet.
  size_t pending() const;
  struct Finished {
    int64_t tag = 0;
    Result<Evaluation> evaluation;  // an error is the harness's own failure
  };
  // The next submission whose verdict is final, judged on this evaluator's device: the first whose
  // candidate has loaded (of the problem the reference served last, where one is ready), waiting
  // while none has. A fast-path failure that torch's toolchain must re-judge goes back to wait for
  // its build while the GPU judges the others (a failed load's re-judge starts as soon as the load
  // fails, without the GPU); the re-judge's verdict is kept. nullopt when nothing
  // is submitted, or when `stopping` says so (what is pending then is dropped).
  std::optional<Finished> next(const std::function<bool()>& stopping);
  // As next(), asking `claim` with a submission's tag before the device first judges it: false
  // drops that submission (its worker ends) and next() goes on with the others; nullopt then also
  // when every pending submission was dropped so. For a caller that lets another evaluator take
  // over submissions waiting here (the session's slots, behind a hang).
  std::optional<Finished> next(const std::function<bool()>& stopping, const std::function<bool(int64_t)>& claim);
  // Drops a submission the device has not begun (its worker ends); false where it is unknown or on
  // the device.
  bool withdraw(int64_t tag);
  // Asked with a submission's tag before its worker starts: false drops the submission, as a claim
  // refused in next() does (another evaluator took it over before any work went into it here).
  // evaluate()'s own submissions (negative tags) are not asked.
  void set_launch_claim(std::function<bool(int64_t)> claim) { launch_claim_ = std::move(claim); }

  // One candidate start to end (submit, then next until it is done): an error means the harness
  // itself failed (the reference could not be built or run); the candidate's failures are verdicts.
  Result<Evaluation> evaluate(const std::string& problem_source, const std::string& problem_hash,
                              const std::string& candidate_source);
  // Queues a candidate evaluate() will be asked for later with this problem's source (its worker
  // runs that ahead of the candidate's, so it is part of what is loaded ahead; the problem's hash
  // is given then); its worker starts as a submission's would.
  void prefetch(const std::string& problem_source, const std::string& candidate_source);
  const EvaluationSettings& settings() const { return settings_; }
  // Starts the reference worker without waiting for it (it imports torch while the first
  // candidates start and compile); evaluate() and reference_info() wait for it.
  void start_reference();
  // The reference worker's hello (python and torch versions, device name, timer) once started.
  Result<nlohmann::json> reference_info();
  // A baseline known from earlier runs (the results database's cache), used instead of timing.
  void set_baseline(const std::string& problem_hash, const Timing& timing) { baselines_[problem_hash] = timing; }
  // Traits and a bandwidth known from earlier runs (the database's caches), used instead of judging.
  void set_traits(const std::string& problem_hash, ProblemTraits traits) { traits_[problem_hash] = std::move(traits); }
  void set_bandwidth(Bandwidth bandwidth) { bandwidth_ = std::move(bandwidth); }
  // What is known of a problem's traits (empty until judged or set).
  std::optional<ProblemTraits> traits(const std::string& problem_hash) const;
  // Candidates that may wait on torch's toolchain at once before wants_more() says no.
  int toolchain_waiting_limit() const;
  // Submissions held ahead of the device (kAheadPerPrefetch): at least one.
  int ahead_limit() const;

 private:
  struct Candidate;                // a candidate worker with its job folder and load request (evaluation_parts.hpp)
  struct Job;                      // one candidate's evaluation on the GPU (evaluation_parts.hpp)
  struct Entry;                    // a submission (or prefetched candidate) until its verdict is final (evaluator.cpp)
  Result<void> spawn_reference();  // unless it runs already
  Result<WorkerProcess*> reference();  // started, its hello received
  // The problem's baseline: known, shared (settings().shared_baselines), or timed here (*measured).
  Result<Got<Timing>> baseline(const std::string& job, const std::string& problem_hash);
  Result<Timing> time_baseline(const std::string& job, const std::string& problem_hash);  // the reference timed
  // A candidate worker loading `candidate_source` after its problem's source, in one namespace.
  std::unique_ptr<Candidate> launch(const std::string& problem_source, const std::string& candidate_source,
                                    bool fastpath);
  std::unique_ptr<Candidate> spawn_candidate();  // a started worker with its job folder, no load sent
  void await_load(Candidate& candidate);
  Result<bool> check_trial(Job& job, int trial, uint64_t seed, bool fresh_placement);
  Result<void> run_candidate(Job& job);
  // `alone`: with the GPU to itself, where others share it (a re-judge after running out of memory).
  Result<Evaluation> evaluate_with(const std::string& problem_source, const std::string& problem_hash,
                                   Candidate& candidate, bool alone);
  // `measure()` with the GPU to itself where this evaluator holds it shared, then shared again.
  template <class Measure>
  auto alone_on_device(Measure&& measure) {
    if (!device_lease_.held() || device_lease_.use() == DeviceGate::Use::whole) return measure();
    device_lease_.release();  // before waiting for the whole GPU, which waits for every shared lease
    device_lease_ = settings_.device_gate->acquire(DeviceGate::Use::whole);
    auto measured = measure();
    device_lease_.release();
    device_lease_ = settings_.device_gate->acquire(DeviceGate::Use::shared);
    return measured;
  }
  Result<bool> judge_load(Evaluation& e, Candidate& candidate);  // true when it loaded
  Result<bool> read_load(Evaluation& e, Candidate& candidate);   // judge_load once the load has ended
  CallResult call_candidate(Job& job, const nlohmann::json& request);
  WorkerRequestHandler compile_requests(Candidate& candidate, std::chrono::steady_clock::time_point deadline);
  // The candidate's timing; none when the candidate failed (its verdict is then decided).
  Result<std::optional<Timing>> time_candidate(Job& job);
  Result<void> judge(Job& job, Candidate& candidate);  // run_candidate, then the flags
  Result<void> judge_traits(Job& job);
  Result<void> measure_bandwidth(Job& job);
  // The next entry to judge (its candidate loaded), waiting for one; nullptr when `stopping`.
  Entry* ready_entry(const std::function<bool()>& stopping, const std::function<bool(const Entry&)>& wanted);
  std::optional<Finished> step(const std::function<bool()>& stopping, const std::function<bool(const Entry&)>& wanted,
                               const std::function<bool(int64_t)>& claim = {});
  // Starts queued submissions while there are places (submit's), and failed loads' re-judges.
  void launch_ahead();
  // Starts an entry's worker unless launch_claim_ refuses it (false: the caller drops the entry).
  bool launch_first(Entry& entry);
  void rejudge_failed_loads();
  // The entries besides the one being judged: not launched, starting or compiling, loaded (or
  // never started), waiting on torch's toolchain.
  struct Held {
    int queued = 0, loading = 0, loaded = 0, toolchain_waiting = 0;
  };
  Held held() const;

  EvaluationSettings settings_;
  std::shared_ptr<ToolchainBuilds> toolchain_;
  std::mutex ready_mutex_;  // candidates' loaders signal the end of a load
  std::condition_variable ready_signal_;
  std::unique_ptr<WorkerProcess> reference_;
  std::map<std::string, Timing> baselines_;      // by problem hash
  std::map<std::string, ProblemTraits> traits_;  // by problem hash
  std::optional<Bandwidth> bandwidth_;
  std::list<std::unique_ptr<Entry>> entries_;      // in submission order
  std::deque<std::unique_ptr<Candidate>> spares_;  // started, waiting for candidates (warm_spares)
  void top_up_spares();
  DeviceGate::Lease device_lease_;             // while judging on a GPU shared with other evaluators
  std::string last_problem_;                   // the problem the reference served last
  std::function<bool(int64_t)> launch_claim_;  // set_launch_claim's
  std::string log_dir_;                        // the reference's log, removed at the end unless it explains a failure
  bool reference_failed_ = false;              // a reference ended or never started while this evaluator ran
  int64_t next_job_ = 0;
  int64_t next_private_tag_ = -1;  // evaluate()'s own tags (callers' are theirs)
};

}  // namespace dicebench::harness
