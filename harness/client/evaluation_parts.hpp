// The parts of an evaluation the evaluator's files share (evaluator.cpp orchestrates,
// candidate_launch.cpp starts candidate workers, trial_calls.cpp runs trials and timed calls,
// evaluation_parts.cpp reads workers' replies): the candidate worker and job records, the secret
// seed derivation, and the helpers that turn replies into an Evaluation. Internal to harness/client.
#pragma once

#include "harness/client/evaluator.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dicebench::harness {
namespace parts {

namespace fs = std::filesystem;

// Seeds the candidate cannot derive: SHA-256 over the run's secret, the problem and the index.
uint64_t mix(uint64_t secret, const std::string& problem_hash, uint64_t index);

// Seed indexes of the secret draws besides the correctness trials (mix() keys them apart).
inline constexpr uint64_t kInitSeedIndex = 1'000'003;
inline constexpr uint64_t kTimedCallSeeds = 2'000'000;  // + call: the inputs of timed call `call`
inline constexpr uint64_t kCheckDraws = 3'000'000;      // + call: whether timed call `call` is checked
inline constexpr uint64_t kTraitSeeds = 4'000'000;      // + draw: the inputs the traits are judged on
inline constexpr uint64_t kBaselineSeed = 5'000'000;    // the reference's timing loop
inline constexpr int kTraitDraws = 3;
// The most load_inline calls one candidate may have built with torch's toolchain (2.4% of real
// candidates call load_inline more than once; none was seen calling it more than a few times).
inline constexpr int kToolchainRequestsPerCandidate = 16;
// Timed calls checked against the reference: kMinChecks secret ones among the calls every timing
// loop makes, each later one with probability 1/kCheckOneIn, and at least a tenth of all, made up
// by checked calls after the loop where needed (a loop cut short by its budget).
inline constexpr uint64_t kCheckOneIn = 10;
inline constexpr int kMinChecks = 3;
// Calls whose inputs are moved where no input of the job has been (PROTOCOL.md, "Fresh placement"):
// one secret checked call per timing loop and one secret correctness trial after the first, and
// besides those each call with probability 1/kFreshOneIn, checked or not, so that a fresh
// placement tells the candidate nothing of whether its call is checked.
inline constexpr uint64_t kPlacementDraws = 7'000'000;       // + call: whether timed call `call` is placed fresh
inline constexpr uint64_t kTrialPlacementDraws = 8'000'000;  // + trial: whether trial `trial` is placed fresh
inline constexpr uint64_t kFreshOneIn = 5;

// A number field that may be absent or null (a shape mismatch has no difference to report).
std::optional<double> number(const nlohmann::json& j, const char* key);
// The part of a compare reply an evaluation keeps: its margin (null when infinite).
std::optional<double> margin_of(const nlohmann::json& compared);
// The last `bytes` of a file the candidate could have replaced (never through a link, only a
// regular file).
std::string tail_of_file(const fs::path& path, size_t bytes);
std::string default_fastpath_cache();
std::string default_toolchain_cache();
std::chrono::milliseconds remaining(std::chrono::steady_clock::time_point deadline);
std::string work_root_of(const std::string& root);
// Environment both kinds of worker get (evaluation_parts.cpp says why).
std::vector<std::pair<std::string, std::string>> worker_environment(const std::string& device);
// What the sandbox launcher said about how the job ended, for a crash's message.
std::string sandbox_notes(const fs::path& log);

// A job folder only this user can enter, removed when the evaluation ends unless kept.
struct JobFolder {
  fs::path path;
  bool keep = false;
  JobFolder(const std::string& root, bool keep_it) : keep(keep_it) {
    std::string pattern = (fs::path(work_root_of(root)) / "dicebench-job-XXXXXX").string();
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~JobFolder() {
    std::error_code ec;
    if (!path.empty() && !keep) fs::remove_all(path, ec);
  }
};

// The verdict of a reference.compared reply (kComparisonVerdicts); another name is the harness
// failing (ErrorKind::harness_failure: the reference worker is ours).
Result<Verdict> compared_verdict(const nlohmann::json& reply);
// A failed candidate call as its verdict: timeout, crashed, or the reply's own error class. A
// reply naming a class outside the vocabulary (which the JSON library cannot see) is an
// ErrorKind::protocol_breach, which evaluate_with charges to the candidate as it does a mistyped
// reply (a JSON exception caught there: the one place the evaluator meets exceptions).
Result<void> charge_failure(Evaluation& e, const CallResult& result, const std::string& stage, const std::string& note,
                            const fs::path& log = {});
bool failed(const CallResult& result);
// Whether a load's reply says the candidate loaded (a malformed one does not).
bool load_succeeded(const CallResult& loaded);
// The JIT compiles a candidate's reply reports so far, kept beside the load-time compile.
void note_jit(Evaluation& e, const CallResult& result);
// The fast path's calls a candidate's reply counts (its fastpath_calls), where it has one.
void note_fastpath_calls(Evaluation& e, const CallResult& result);

// Adds the wall time since the last lap to a phase.
struct PhaseClock {
  std::map<std::string, double>* phases;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  void lap(Phase phase) {
    const auto now = std::chrono::steady_clock::now();
    (*phases)[std::string(phase_name(phase))] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
};

}  // namespace parts

// A candidate worker: spawned; a thread of its own sends its candidate.load and receives the
// reply, serving the compiles the candidate asks for on the way (compile_service.hpp, and
// torch's toolchain through toolchain_builds.hpp), so that candidates compile while the host is
// busy with another.
struct Evaluator::Candidate {
  std::string source_hash;
  std::string job;
  bool fastpath = false;  // its load_inline calls take the fast path first
  std::unique_ptr<parts::JobFolder> folder;
  std::unique_ptr<WorkerProcess> worker;
  std::string start_error;           // the worker could not be started
  std::optional<CallResult> loaded;  // candidate.load's outcome, once received
  std::thread loader;                // sends the load, receives its reply into `loaded`
  std::atomic<bool> load_done{false};
  std::atomic<bool> toolchain_waiting{false};  // a build of torch's toolchain is asked for, not answered
  std::string toolchain_timeout;               // why the candidate was ended: a build ran past its limit
  ToolchainBuilds* builds = nullptr;           // the pool its builds go to
  std::chrono::steady_clock::time_point started;
  // Its builds with torch's toolchain (toolchain.result outcomes it was sent).
  int toolchain_requests = 0, toolchain_builds = 0, toolchain_cache_hits = 0, toolchain_failures = 0;
  int toolchain_with_header = 0;  // builds whose main.cpp compile was offered a precompiled header
  double toolchain_queued_seconds = 0, toolchain_build_seconds = 0;

  ~Candidate() {
    if (!loader.joinable()) return;
    if (builds) builds->abandon(job);   // ends a wait for a build, and a build nobody else wants
    if (worker) worker->signal_kill();  // ends the loader's wait at once
    loader.join();
  }
  std::filesystem::path log() const {
    return folder && !folder->path.empty() ? folder->path / "candidate.log" : std::filesystem::path();
  }
  void note_toolchain(const ToolchainOutcome& outcome);
  // A call that ended because a build ran past its limit is the candidate's timeout, not a crash.
  void charge_toolchain_timeout(CallResult& result) const;
  // {"builds", "cache_hits", "failures", "with_header", "queued_seconds", "build_seconds"}, or null
  // without any.
  nlohmann::json toolchain_use() const;
};

struct Evaluator::Job {
  std::string id, problem_hash, init_inputs;
  uint64_t init_seed = 0;
  Candidate* candidate = nullptr;
  WorkerProcess* reference = nullptr;
  Evaluation evaluation;
  std::chrono::steady_clock::time_point deadline;  // of the candidate's run (init, trials, timing)
  std::string note;                                // appended to a failing verdict's message
  double max_abs = 0, mean_abs_sum = 0;
  int compared_count = 0;
  std::optional<double> margin;                        // the worst margin of the passed comparisons
  std::optional<int> aliased_trial;                    // a trial whose outputs shared storage with its inputs
  void note_compared(const nlohmann::json& compared);  // a passed comparison's figures
};

}  // namespace dicebench::harness
