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
#include "harness/client/once_per_key.hpp"
#include "harness/client/sandbox_launch.hpp"
#include "harness/client/toolchain_builds.hpp"
#include "harness/client/worker_process.hpp"
#include "results/flags.hpp"
#include "results/verdict.hpp"

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

// How close a candidate's floating outputs must be to the reference's (|c - r| <= atol + rtol * |r|,
// atol = rtol): per_dtype, the default, allows 1e-4 for float32 and other float dtypes and 1e-2 for
// float16 and bfloat16; uniform allows 1e-2 for every float dtype. The one definition on this side;
// protocol.py's TOLERANCE_MODES is the worker's, and tests/host/test_vocabulary.cpp checks they agree.
inline constexpr std::array<std::string_view, 2> kToleranceModes = {"per_dtype", "uniform"};
inline constexpr std::string_view kDefaultToleranceMode = kToleranceModes[0];

// The mode both models run in: train, the default, as KernelBench does (nn.Module's default mode:
// BatchNorm uses batch statistics, Dropout drops); eval calls .eval() on both. protocol.py's
// MODEL_MODES is the worker's list, checked equal by tests/results/test_vocabulary.cpp.
inline constexpr std::array<std::string_view, 2> kModelModes = {"train", "eval"};
inline constexpr std::string_view kDefaultModelMode = kModelModes[0];

struct Timing {
  double median_ms = 0, mean_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0, p10_ms = 0, p90_ms = 0;
  int trials = 0;
  std::string stop_reason{};  // converged, max_trials or budget; "" when not known (a cached baseline)
  int warm_calls = 0;       // untimed calls made just before timed ones
};

struct EvaluationSettings {
  std::string worker_executable;
  std::string device = "cpu";                  // "cpu" or "cuda"
  std::optional<std::string> visible_devices;  // the GPU this evaluator's workers use
  int trials = 5;                              // correctness trials, fresh inputs each
  std::string tolerance{kDefaultToleranceMode};  // one of kToleranceModes
  std::string model_mode{kDefaultModelMode};  // one of kModelModes
  uint64_t secret = 0;                         // per-run secret the input seeds derive from
  std::chrono::milliseconds compile_timeout{std::chrono::minutes(10)};  // start + load (compile)
  std::chrono::milliseconds candidate_timeout{std::chrono::minutes(5)};  // init + trials + timing
  std::chrono::milliseconds reference_timeout{std::chrono::minutes(10)};  // each reference request (settings: the longer of the two above)
  int warmup = 3, min_trials = 10, max_trials = 100;
  // target_rel_ci: timing stops once the median's 95% interval lies within this fraction of it
  // (eval.timing_spread; dicebench_timing.py argues the default).
  double budget_seconds = 10.0, target_rel_ci = 0.02;
  // An untimed call on fresh inputs of its own just before each timed call (eval.warm_calls).
  bool warm_calls = true;
  // Inputs (and kept outputs of checked calls) the reference makes ahead for a batch of timed calls
  // (eval.timing_batch); it also takes at most a quarter of the free memory, and never fewer than one call.
  int64_t batch_bytes = int64_t{4} << 30;
  std::string work_root;                       // job folders go here (default: $TMPDIR)
  bool fastpath = true;                        // compile load_inline calls with NVRTC (CUDA only)
  std::string baseline_method = "eager";       // or "compile": the reference under torch.compile
  int prefetch = 4;                            // candidate workers started ahead of the current one
  int warm_spares = 0;                         // candidate workers kept started for the next calls
  std::string fastpath_cache;                  // compile cache folder (default: $XDG_CACHE_HOME/dicebench/fastpath)
  SandboxSettings sandbox;                     // around every candidate worker (sandbox_launch.hpp)
  std::string compile_executable;              // dicebench-compile, the fast path's trusted compile step
  bool keep_jobs = false;                      // keep job folders (logs, inputs) after each evaluation
  double speedup_bound = 10.0;                 // a larger speedup is flagged excessive_speedup (informative)
  // Bytes per second for the memory floor; 0: measured on the GPU by the reference worker (and none
  // on the CPU, where no floor applies unless this is set).
  double bandwidth = 0;
  // Re-judge a failing candidate built on the NVRTC fast path with torch's toolchain (the verdicts
  // of evaluator.cpp's fastpath_could_cause) before its verdict is kept.
  bool confirm_fastpath_failures = true;
  // torch's toolchain, for the load_inline calls the fast path declines and for re-judges: builds
  // run in a pool of their own (toolchain_builds.hpp), at most toolchain_jobs at once (0: half
  // this machine's cores, at least 1), each within toolchain_timeout, their outcomes
  // cached by content in toolchain_cache (default: $XDG_CACHE_HOME/dicebench/toolchain).
  int toolchain_jobs = 0;
  std::chrono::milliseconds toolchain_timeout{std::chrono::minutes(10)};
  std::string toolchain_cache;
  // One pool for several evaluators (one per GPU); made by the evaluator when not given.
  std::shared_ptr<ToolchainBuilds> toolchain_builds;
  // Baselines that evaluators on one device (a run's CPU slots) share, one timing per problem; none:
  // this evaluator times its own.
  std::shared_ptr<OncePerKey<Timing>> shared_baselines;
};

// How timed calls get their inputs; part of the baseline cache's key (a baseline timed another way
// is not reused): fresh inputs for every call, an untimed warm call before each timed one.
inline constexpr const char* kTimingInputs = "fresh_inputs_warm";

struct KernelTime {
  std::string name, kind;  // kind: kernel, memcpy, memset
  bool from_candidate = false;
  double launches_per_call = 0, ms_per_call = 0;
  std::string grid, block;
};

// How the candidate's load_inline calls were built (at load), and what a JIT DSL (Triton) compiled
// at its kernels' first launches (inside trials or timed calls, whose times leave it out).
struct CompileInfo {
  std::string path = "none";  // nvrtc, fallback, mixed, none
  std::string reason, log;
  double seconds = 0;
  nlohmann::json records = nlohmann::json::array();
  // {"count", "seconds", "compiles": [{"name", "kernel", "seconds"}]}, whatever the verdict; count 0
  // when nothing was JIT-compiled.
  nlohmann::json jit = nlohmann::json::object();
};

// What the timed calls ran on the device (CUDA only); medians over the timed calls.
struct DeviceProfile {
  double busy_ms = 0;            // union of the call's device intervals
  double host_ms = 0;            // host wall time from the harness's start to the device-wide synchronize
  double call_host_ms = 0;       // the host's own time in the call (from entering it to its return)
  double launch_latency_ms = 0;  // the harness's start marker on the device -> the call's first device work
  double span_ms = 0;            // that marker -> the call's last device work (launch latency included)
  double candidate_share = 0;
  std::vector<KernelTime> kernels;
};

// A problem's degenerate traits, judged from its reference alone (reference.traits).
struct ProblemTraits {
  nlohmann::json traits = nlohmann::json::array();  // trait names (results/flags.hpp)
  nlohmann::json details = nlohmann::json::object();  // what was measured
};

// The device's memory bandwidth for the memory floor.
struct Bandwidth {
  double bytes_per_second = 0;
  std::string method;  // "cuda_copy_1024MiB_best_of_10", or "setting" for eval.bandwidth
};

struct Evaluation {
  // The verdict (results/verdict.hpp). What a worker replies is parsed into it: a name outside the
  // vocabulary is the worker breaking the protocol.
  results::Verdict status = results::Verdict::crashed;
  bool compiled = false;
  bool correct = false;
  std::optional<Timing> runtime;
  std::optional<Timing> baseline;
  std::optional<double> speedup, speedup_mean;
  std::optional<double> max_abs_diff, mean_abs_diff;
  std::optional<int> failed_trial;
  std::optional<int> failed_call;   // the timed call whose checked outputs were wrong
  std::string failed_stage;         // load, init, trials, timing, after_timing ("" when correct)
  std::string error_class, error_message;
  // The worst compared element, |c - r| / (atol + rtol * |r|), over every comparison of a correct
  // candidate, or of the failing comparison; absent when not finite or nothing was compared.
  std::optional<double> margin;
  int64_t input_bytes = 0, output_bytes = 0;  // one call's inputs and outputs
  std::optional<double> memory_floor_ms;       // their transfer time at the device's bandwidth
  std::vector<std::pair<results::EvaluationFlag, std::string>> flags;  // with what they saw
  int timed_calls = 0, checked_calls = 0;      // calls in candidate.time, and how many were compared
  int timed_batches = 0;                       // reference.batch requests that made their inputs
  int fresh_placements = 0;                    // calls (trials and timed) whose inputs were placed fresh
  // Where the timing loop's wall time went, as the host saw it: the whole loop (from candidate.time
  // to its reply), the reference making the calls' inputs (batches) and comparing checked calls'
  // outputs (the candidate waits for both); the rest is the candidate's (calls, receiving inputs,
  // handing over outputs) and the messages'.
  double timing_loop_s = 0, timing_batches_s = 0, timing_compares_s = 0;
  std::optional<ProblemTraits> problem_traits;   // the problem's traits, as known to the evaluator
  std::optional<ProblemTraits> traits_measured;  // judged in this call (not known before)
  std::optional<Bandwidth> bandwidth_measured;   // measured in this call (not known before)
  // When torch's toolchain re-judged a candidate the fast path failed: what the fast path said
  // ({"verdict", "error_message"}); the fields above are the toolchain's.
  std::optional<nlohmann::json> fastpath_outcome;
  bool baseline_measured = false;  // timed in this call (not from the cache)
  // Calls of functions the fast path built, as the candidate's last reply counted them (none: no
  // reply said); not stored: it decides whether a failure is re-judged with torch's toolchain.
  std::optional<int64_t> fastpath_calls;
  std::optional<CompileInfo> compile;  // once the candidate's load finished
  std::optional<DeviceProfile> profile;
  std::string log_tail;  // the end of what the candidate printed
  // The GPU's (the evaluator's) wall time on this candidate: its evaluation, a re-judge's too, and
  // the time the GPU waited for it to load while nothing else was ready.
  double seconds = 0;
  double latency_seconds = 0;  // from its submission to its final verdict
  // Wall seconds by phase: slot_wait (the GPU waited for this candidate's load, nothing else being
  // ready), compile_wait (what was left of its load when it was judged), prepare (reference),
  // problem_checks, init, trials, timing, after_timing, baseline; fastpath_* those of the fast
  // path's evaluation where torch's toolchain re-judged it.
  std::map<std::string, double> phases;
  // Its builds with torch's toolchain (toolchain_builds.hpp): {"builds", "cache_hits", "failures",
  // "queued_seconds", "build_seconds"}; absent without any.
  std::optional<nlohmann::json> toolchain;
};

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

  // One candidate start to end (submit, then next until it is done): an error means the harness
  // itself failed (the reference could not be built or run); the candidate's failures are verdicts.
  Result<Evaluation> evaluate(const std::string& problem_source, const std::string& problem_hash,
                              const std::string& candidate_source);
  // Queues a candidate evaluate() will be asked for later, its problem not known yet; its worker
  // starts as a submission's would.
  void prefetch(const std::string& candidate_source);
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
  struct Candidate;  // a candidate worker with its job folder and load request (evaluation_parts.hpp)
  struct Job;        // one candidate's evaluation on the GPU (evaluation_parts.hpp)
  struct Entry;      // a submission (or prefetched candidate) until its verdict is final (evaluator.cpp)
  Result<void> spawn_reference();       // unless it runs already
  Result<WorkerProcess*> reference();   // started, its hello received
  // The problem's baseline: known, shared (settings().shared_baselines), or timed here (*measured).
  Result<Timing> baseline(const std::string& job, const std::string& problem_hash, bool* measured);
  Result<Timing> time_baseline(const std::string& job, const std::string& problem_hash);  // the reference timed
  std::unique_ptr<Candidate> launch(const std::string& candidate_source, bool fastpath);
  std::unique_ptr<Candidate> spawn_candidate();  // a started worker with its job folder, no load sent
  void await_load(Candidate& candidate);
  Result<bool> check_trial(Job& job, int trial, uint64_t seed, bool fresh_placement);
  Result<void> run_candidate(Job& job);
  Result<Evaluation> evaluate_with(const std::string& problem_source, const std::string& problem_hash, Candidate& candidate);
  bool judge_load(Evaluation& e, Candidate& candidate);  // true when it loaded
  bool read_load(Evaluation& e, Candidate& candidate);   // judge_load once the load has ended
  CallResult call_candidate(Job& job, const nlohmann::json& request);
  WorkerRequestHandler compile_requests(Candidate& candidate, std::chrono::steady_clock::time_point deadline);
  Result<bool> time_candidate(Job& job, Timing* runtime);
  Result<void> judge(Job& job, Candidate& candidate);  // run_candidate, then the flags
  Result<void> judge_traits(Job& job);
  Result<void> measure_bandwidth(Job& job);
  // The next entry to judge (its candidate loaded), waiting for one; nullptr when `stopping`.
  Entry* ready_entry(const std::function<bool()>& stopping, const std::function<bool(const Entry&)>& wanted);
  std::optional<Finished> step(const std::function<bool()>& stopping, const std::function<bool(const Entry&)>& wanted);
  // Starts queued submissions while there are places (submit's), and failed loads' re-judges.
  void launch_ahead();
  void rejudge_failed_loads();
  // The entries besides the one being judged: not launched, starting or compiling, loaded (or
  // never started), waiting on torch's toolchain.
  struct Held {
    int queued = 0, loading = 0, loaded = 0, toolchain_waiting = 0;
  };
  Held held() const;

  EvaluationSettings settings_;
  std::shared_ptr<ToolchainBuilds> toolchain_;
  std::mutex ready_mutex_;                 // candidates' loaders signal the end of a load
  std::condition_variable ready_signal_;
  std::unique_ptr<WorkerProcess> reference_;
  std::map<std::string, Timing> baselines_;  // by problem hash
  std::map<std::string, ProblemTraits> traits_;  // by problem hash
  std::optional<Bandwidth> bandwidth_;
  std::list<std::unique_ptr<Entry>> entries_;  // in submission order
  std::deque<std::unique_ptr<Candidate>> spares_;  // started, waiting for candidates (warm_spares)
  void top_up_spares();
  std::string last_problem_;  // the problem the reference served last
  std::string log_dir_;
  int64_t next_job_ = 0;
  int64_t next_private_tag_ = -1;  // evaluate()'s own tags (callers' are theirs)
};

}  // namespace dicebench::harness
