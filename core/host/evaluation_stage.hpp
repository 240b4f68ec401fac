// The evaluation stage of a run: evaluates every stored sample that has no evaluation yet through
// the harness's isolated workers and stores each verdict in its own transaction; samples without
// a candidate get extraction_failed. Also resolves the evaluation settings from the config.
#pragma once

#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "harness/client/evaluator.hpp"
#include "results/store.hpp"

#include <functional>
#include <map>
#include <optional>
#include <vector>
#include <string>

namespace dicebench::host {

// Settings (section [eval] or flags): device = cpu|cuda (default: cuda where a GPU is visible), trials, tolerance = kernelbench|compat,
// model_mode = train (KernelBench's) | eval, compile_timeout_s (worker start-up and the candidate's
// compile), timeout_s (the candidate's init, trials and timing), timing_budget_s, fastpath = on|off
// (NVRTC compiles of load_inline calls on CUDA), fastpath_cache (its cache folder), baseline =
// eager|compile (the reference as is, or under torch.compile), cpu_workers, gpus; sandbox =
// best|require|off (the candidate sandbox: what this machine allows, all of it, or none),
// keep_jobs = true|false, memory_max (a size, or auto: half of the machine's memory), pids_max,
// file_size_max, open_files_max (the sandbox's limits per candidate); speedup_bound (flag
// excessive_speedup above it, default 10), bandwidth_gbps (the memory floor's bandwidth; default:
// measured on the GPU, none on the CPU), confirm_fastpath = on|off (re-judge fast-path failures with
// torch's toolchain).
Result<harness::EvaluationSettings> evaluation_settings(const Config& config);

// dicebench-worker: $DICEBENCH_WORKER, else beside this executable.
std::string worker_executable();
// A helper executable of the worker's (dicebench-sandbox, dicebench-compile): $variable, else
// `name` beside the worker.
std::string beside_worker(const std::string& worker, const char* name, const char* variable);

struct ProblemSource {
  std::string source;
  std::string content_hash;
};

struct EvaluationSummary {
  size_t evaluated = 0;
  std::map<std::string, size_t> verdicts;
  std::map<std::string, size_t> flags;  // evaluations by flag (results/flags.hpp)
  size_t degenerate_problems = 0;       // problems with a degenerate trait
  std::string timing;
  bool interrupted = false;
};

// The results row for one sample's evaluation.
results::NewEvaluation evaluation_row(int64_t sample, const harness::Evaluation& evaluation, const std::string& device);

// Where evaluations run: for cuda one slot per GPU in eval.gpus ("all", the default, or a list
// such as "0,2" of visible GPUs), each pinned with CUDA_VISIBLE_DEVICES; for cpu eval.cpu_workers
// slots (default 1) without pinning.
Result<std::vector<std::optional<std::string>>> evaluation_slots(const Config& config, const std::string& device);

// What reading a candidate for a problem finds (the suite's review): flags added to its evaluation.
using CandidateReview = std::function<Result<std::vector<std::pair<results::EvaluationFlag, std::string>>>(
    const ProblemKey& problem, const std::string& candidate)>;

// Evaluates with one Evaluator (reference worker, candidate workers) per slot, in parallel; `review`
// (if set) is called for every candidate, from those slots' threads.
Result<EvaluationSummary> evaluate_pending(results::Store& store, int64_t run,
                                           const std::map<ProblemKey, ProblemSource>& problems,
                                           const harness::EvaluationSettings& settings,
                                           const std::vector<std::optional<std::string>>& slots,
                                           const CandidateReview& review = {});

}  // namespace dicebench::host
