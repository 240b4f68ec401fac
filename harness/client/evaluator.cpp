// The evaluator's scheduling: workers started and kept (the reference, spares), submissions queued,
// launched ahead of the device and taken as they load, fast-path failures re-judged with torch's
// toolchain; each candidate is judged by judging.cpp.
#include "harness/client/evaluator.hpp"

#include "core/base/sha256.hpp"
#include "core/spec/protocol.hpp"
#include "harness/client/evaluation_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace dicebench::harness {

using namespace parts;

// A submission (or a prefetched candidate, not asked for yet) until its verdict is final.
struct Evaluator::Entry {
  int64_t tag = 0;
  bool asked_for = false;  // submitted, or prefetched and then asked for by evaluate()
  std::string problem_source, problem_hash, candidate_source, source_hash;
  std::unique_ptr<Candidate> candidate;  // launched once there is room (or at once for a re-judge)
  std::optional<Evaluation> fastpath;    // the fast path's evaluation, while torch's toolchain re-judges
  std::chrono::steady_clock::time_point submitted;
  bool on_device = false;  // being judged (evaluate_with)
  bool claimed = false;    // next()'s claim said yes: the device judges it here
  bool alone = false;      // judged again with the GPU to itself (it ran out of memory beside others)
  std::map<std::string, double> shared_gpu_phases;  // the phases of that first evaluation
  double slot_seconds = 0;                          // the GPU's time on it so far
  double waited_seconds = 0;                        // the GPU's time waiting for it, nothing else being ready
};

Evaluator::Evaluator(EvaluationSettings settings) : settings_(std::move(settings)) {
  if (settings_.fastpath_cache.empty()) settings_.fastpath_cache = default_fastpath_cache();
  if (settings_.toolchain_cache.empty()) settings_.toolchain_cache = default_toolchain_cache();
  std::error_code ec;
  fs::create_directories(settings_.fastpath_cache, ec);  // candidates see it read-only: it must exist first
  settings_.sandbox.read_only.push_back(fs::weakly_canonical(settings_.fastpath_cache, ec).string());
  toolchain_ = settings_.toolchain_builds;
  if (!toolchain_) toolchain_ = std::make_shared<ToolchainBuilds>(toolchain_build_settings(settings_));
  fs::create_directories(toolchain_->settings().cache_dir, ec);
  settings_.sandbox.read_only.push_back(fs::weakly_canonical(toolchain_->settings().cache_dir, ec).string());
  // The worker's own files stay visible where the sandbox's private /tmp would hide them (a
  // checkout under /tmp); so do dicebench-compile's, which live beside it.
  if (settings_.sandbox.mode != "off")
    for (const auto& path : worker_runtime_paths(settings_.worker_executable))
      settings_.sandbox.read_only.push_back(path);
}

Evaluator::~Evaluator() {
  entries_.clear();  // their candidates' loaders end before what they signal goes
  spares_.clear();
  // It zeroes its device memory (every job's it kept), then exits.
  if (reference_ && reference_->end() != WorkerEnding::answered) reference_failed_ = true;
  // The reference's log is kept where it may explain a failure (or where jobs are kept); else it
  // goes, as the candidates' logs go with their job folders.
  std::error_code ec;
  if (!log_dir_.empty() && !reference_failed_ && !settings_.keep_jobs) fs::remove_all(log_dir_, ec);
}

int default_toolchain_jobs(int cores) { return std::max(1, cores / 2); }

ToolchainBuildSettings toolchain_build_settings(const EvaluationSettings& settings) {
  ToolchainBuildSettings t;
  t.worker_executable = settings.worker_executable;
  t.cache_dir = settings.toolchain_cache.empty() ? default_toolchain_cache() : settings.toolchain_cache;
  t.work_root = settings.work_root;
  t.sandbox = settings.sandbox;
  if (settings.sandbox.mode != "off")
    for (const auto& path : worker_runtime_paths(settings.worker_executable)) t.sandbox.read_only.push_back(path);
  t.jobs = settings.toolchain_jobs > 0 ? settings.toolchain_jobs
                                       : default_toolchain_jobs(static_cast<int>(std::thread::hardware_concurrency()));
  t.niceness = settings.timing ? kTimedBuildNiceness : 0;
  t.timeout = settings.toolchain_timeout;
  t.precompiled_headers = settings.toolchain_precompiled_headers;
  return t;
}

Result<void> Evaluator::spawn_reference() {
  if (reference_ && reference_->alive()) return {};
  if (reference_) reference_failed_ = true;  // it ended while this evaluator still needed it
  if (settings_.sandbox.mode != "off") {
    auto status = sandbox_status(settings_.sandbox);  // under require, a missing protection stops here
    if (!status) return status.error();
  }
  if (log_dir_.empty()) {
    JobFolder folder(settings_.work_root, false);
    if (folder.path.empty()) return make_error("cannot create a folder for worker logs");
    log_dir_ = folder.path.string() + "-logs";
    std::error_code ec;
    fs::create_directories(log_dir_, ec);
  }
  WorkerOptions options{settings_.worker_executable, "reference", settings_.device, log_dir_ + "/reference.log",
                        settings_.visible_devices};
  options.environment = worker_environment(settings_.device);
  auto spawned = WorkerProcess::spawn(options);
  if (!spawned) return spawned.error();
  reference_ = std::move(*spawned);
  reference_->set_wait_hook([this] { launch_ahead(); });  // candidates load while the device is busy
  return {};
}

void Evaluator::start_reference() {
  (void)spawn_reference();  // a failure shows again in reference()
  toolchain_->prepare();
}

Result<WorkerProcess*> Evaluator::reference() {
  DICEBENCH_TRY(spawn_reference());
  if (reference_->hello().is_null()) {
    if (auto hello = reference_->await_hello(); !hello) {
      reference_failed_ = true;
      reference_.reset();
      return hello.error();
    }
  }
  return reference_.get();
}

Result<nlohmann::json> Evaluator::reference_info() {
  auto ref = reference();
  if (!ref) return ref.error();
  return (*ref)->hello();
}

namespace {

// Verdicts of a candidate built on the fast path that torch's toolchain re-judges: failures where
// the fast path's own glue (argument conversion, the ATen shim) could be the cause. A failure its
// last reply showed to come before any call of what the fast path built cannot be (a crash says
// nothing of what ran, and is re-judged).
bool fastpath_could_cause(const Evaluation& e) {
  if (!e.compile || (e.compile->path != "nvrtc" && e.compile->path != "mixed")) return false;
  if (e.verdict == Verdict::crashed) return true;
  const bool failed = e.verdict == Verdict::runtime_error || e.verdict == Verdict::shape_mismatch ||
                      e.verdict == Verdict::dtype_mismatch;
  return failed && (!e.fastpath_calls || *e.fastpath_calls > 0);
}

// A failure of running out of the GPU's memory, which others sharing the GPU may have caused.
bool ran_out_of_memory(const Evaluation& e) {
  if (e.verdict != Verdict::runtime_error && e.verdict != Verdict::crashed) return false;
  std::string message = e.error_message;
  std::transform(message.begin(), message.end(), message.begin(), [](unsigned char c) { return std::tolower(c); });
  return message.find("out of memory") != std::string::npos;
}

// A re-judge's evaluation with the fast path's kept beside it: the toolchain's verdict stands, a
// disagreement is flagged, the fast path's phases and what it measured are kept.
Evaluation merge_rejudge(Evaluation fast, Evaluation toolchain) {
  toolchain.fastpath_outcome = nlohmann::json{{"verdict", verdict_name(fast.verdict)},
                                              {"error_message", fast.error_message.substr(0, 2000)},
                                              {"compile_path", fast.compile ? fast.compile->path : "none"}};
  if (toolchain.verdict != fast.verdict)
    toolchain.flags.emplace_back(EvaluationFlag::fastpath_disagreement,
                                 fmt::format("fast path: {}; torch's toolchain: {}", verdict_name(fast.verdict),
                                             verdict_name(toolchain.verdict)));
  for (const auto& [phase, seconds] : fast.phases)
    toolchain.phases[std::string(kPhaseRejudgedPrefix) + phase] = seconds;
  if (!toolchain.traits_measured) toolchain.traits_measured = std::move(fast.traits_measured);
  if (!toolchain.bandwidth_measured) toolchain.bandwidth_measured = std::move(fast.bandwidth_measured);
  if (!toolchain.baseline_measured && fast.baseline_measured) {
    toolchain.baseline_measured = true;
    toolchain.baseline = fast.baseline;
  }
  return toolchain;
}

}  // namespace

void Evaluator::submit(Submission submission) {
  auto entry = std::make_unique<Entry>();
  entry->tag = submission.tag;
  entry->asked_for = true;
  entry->problem_source = std::move(submission.problem_source);
  entry->problem_hash = std::move(submission.problem_hash);
  entry->candidate_source = std::move(submission.candidate_source);
  entry->source_hash = sha256_hex(entry->candidate_source);
  entry->submitted = std::chrono::steady_clock::now();
  entries_.push_back(std::move(entry));
  launch_ahead();
}

void Evaluator::prefetch(const std::string& problem_source, const std::string& candidate_source) {
  auto entry = std::make_unique<Entry>();
  entry->problem_source = problem_source;
  entry->candidate_source = candidate_source;
  entry->source_hash = sha256_hex(candidate_source);
  entry->submitted = std::chrono::steady_clock::now();
  entries_.push_back(std::move(entry));
  launch_ahead();
}

Evaluator::Held Evaluator::held() const {
  Held held;
  for (const auto& entry : entries_) {
    const Candidate* c = entry->candidate.get();
    if (entry->on_device) continue;
    if (!c)
      ++held.queued;
    else if (c->load_done || !c->worker)
      ++held.loaded;
    else if (c->toolchain_waiting)
      ++held.toolchain_waiting;
    else
      ++held.loading;
  }
  return held;
}

int Evaluator::toolchain_waiting_limit() const { return std::max(8, 4 * toolchain_->settings().jobs); }

int Evaluator::ahead_limit() const { return std::max(1, kAheadPerPrefetch * settings_.prefetch); }

bool Evaluator::wants_more() const {
  const Held h = held();
  return h.queued + h.loading + h.loaded < ahead_limit() && h.toolchain_waiting < toolchain_waiting_limit();
}

size_t Evaluator::pending() const {
  return static_cast<size_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const auto& e) { return e->asked_for; }));
}

void Evaluator::launch_ahead() {
  rejudge_failed_loads();
  Held h = held();
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (h.loading >= settings_.prefetch || h.loading + h.loaded >= ahead_limit()) break;
    if ((*it)->candidate) {
      ++it;
    } else if (launch_first(**it)) {
      ++h.loading;
      ++it;
    } else {
      it = entries_.erase(it);
    }
  }
}

bool Evaluator::launch_first(Entry& entry) {
  if (entry.asked_for && entry.tag >= 0 && launch_claim_ && !launch_claim_(entry.tag)) return false;
  entry.candidate = launch(entry.problem_source, entry.candidate_source, settings_.fastpath);
  return true;
}

// A fast-path candidate whose load failed as torch's toolchain must re-judge needs no device for
// that verdict: its re-judge starts at once, not once the device takes it. The device then judges
// the re-judge alone, and step() keeps its verdict with the fast path's beside it.
void Evaluator::rejudge_failed_loads() {
  if (!settings_.confirm_fastpath_failures) return;
  for (auto& entry : entries_) {
    Candidate* c = entry->candidate.get();
    if (entry->on_device || entry->fastpath || !c || !c->fastpath || !c->load_done || load_succeeded(*c->loaded))
      continue;
    await_load(*c);
    Evaluation e;
    try {
      // A reply that breaks the protocol (an error here, or a JSON exception) is charged by evaluate_with.
      const auto loaded = read_load(e, *c);
      if (!loaded || *loaded || !fastpath_could_cause(e)) continue;
    } catch (const nlohmann::json::exception&) {
      continue;
    }
    entry->fastpath = std::move(e);
    entry->candidate = launch(entry->problem_source, entry->candidate_source, /*fastpath=*/false);
  }
}

Evaluator::Entry* Evaluator::ready_entry(const std::function<bool()>& stopping,
                                         const std::function<bool(const Entry&)>& wanted) {
  while (!stopping()) {
    launch_ahead();
    Entry* first_ready = nullptr;
    Entry* same_problem = nullptr;
    Entry* first_unlaunched = nullptr;
    bool loading = false;
    for (auto& entry : entries_) {
      if (!entry->asked_for || !wanted(*entry)) continue;
      const Candidate* c = entry->candidate.get();
      if (!c) {
        if (!first_unlaunched) first_unlaunched = entry.get();
        continue;
      }
      if (c->load_done || !c->worker) {
        if (!first_ready) first_ready = entry.get();
        if (!same_problem && entry->problem_hash == last_problem_) same_problem = entry.get();
      } else {
        loading = true;
      }
    }
    if (same_problem) return same_problem;
    if (first_ready) return first_ready;
    if (!loading && !first_unlaunched) return nullptr;  // nothing of what is wanted is pending
    if (!loading && first_unlaunched) {                 // no room ahead (prefetch 0): start it now
      if (!launch_first(*first_unlaunched))
        entries_.erase(
            std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.get() == first_unlaunched; }));
      continue;
    }
    std::unique_lock lock(ready_mutex_);
    ready_signal_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return nullptr;
}

std::optional<Evaluator::Finished> Evaluator::step(const std::function<bool()>& stopping,
                                                   const std::function<bool(const Entry&)>& wanted,
                                                   const std::function<bool(int64_t)>& claim) {
  start_reference();  // starting while the candidates' workers start, not before them
  while (true) {
    const auto waiting = std::chrono::steady_clock::now();
    Entry* entry = ready_entry(stopping, wanted);
    if (!entry) return std::nullopt;
    if (claim && entry->asked_for && !entry->claimed) {
      if (!claim(entry->tag)) {  // taken over elsewhere: dropped here
        entries_.erase(std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.get() == entry; }));
        continue;
      }
      entry->claimed = true;
    }
    const auto started = std::chrono::steady_clock::now();
    entry->waited_seconds += std::chrono::duration<double>(started - waiting).count();
    entry->on_device = true;
    auto evaluated = evaluate_with(entry->problem_source, entry->problem_hash, *entry->candidate, entry->alone);
    entry->on_device = false;
    last_problem_ = entry->problem_hash;
    entry->slot_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const auto found = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.get() == entry; });
    Finished finished{entry->tag, Result<Evaluation>(make_error("unset"))};
    if (!evaluated) {
      finished.evaluation = evaluated.error();
      entries_.erase(found);
      return finished;
    }
    Evaluation e = std::move(*evaluated);
    // Out of memory on a GPU other evaluators share: judged again with the GPU to itself, the same
    // way (the fast path, or torch's toolchain for a re-judge), and that verdict is the one kept.
    if (!entry->alone && settings_.device_gate && settings_.device_gate->slots() > 1 && ran_out_of_memory(e)) {
      entry->alone = true;
      entry->shared_gpu_phases = e.phases;
      entry->candidate.reset();
      entry->candidate =
          launch(entry->problem_source, entry->candidate_source, entry->fastpath ? false : settings_.fastpath);
      continue;
    }
    // The compile path never decides a verdict: a failure the fast path's glue could have caused is
    // judged again with torch's toolchain (its build in the toolchain pool while the GPU judges
    // others), and the toolchain's verdict is kept.
    if (!entry->fastpath && settings_.confirm_fastpath_failures && fastpath_could_cause(e)) {
      entry->fastpath = std::move(e);
      entry->candidate.reset();
      entry->candidate = launch(entry->problem_source, entry->candidate_source, /*fastpath=*/false);
      continue;
    }
    if (entry->fastpath) e = merge_rejudge(std::move(*entry->fastpath), std::move(e));
    for (const auto& [phase, seconds] : entry->shared_gpu_phases)
      e.phases[std::string(kPhaseSharedGpuPrefix) + phase] = seconds;
    e.seconds = entry->slot_seconds;
    if (entry->waited_seconds > 0) e.phases[std::string(phase_name(Phase::slot_wait))] += entry->waited_seconds;
    e.latency_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - entry->submitted).count();
    finished.evaluation = std::move(e);
    entries_.erase(found);
    return finished;
  }
}

std::optional<Evaluator::Finished> Evaluator::next(const std::function<bool()>& stopping) {
  return step(stopping, [](const Entry&) { return true; });
}

std::optional<Evaluator::Finished> Evaluator::next(const std::function<bool()>& stopping,
                                                   const std::function<bool(int64_t)>& claim) {
  return step(
      stopping, [](const Entry&) { return true; }, claim);
}

bool Evaluator::withdraw(int64_t tag) {
  const auto found = std::find_if(entries_.begin(), entries_.end(),
                                  [&](const auto& e) { return e->asked_for && e->tag == tag && !e->on_device; });
  if (found == entries_.end()) return false;
  entries_.erase(found);
  return true;
}

Result<Evaluation> Evaluator::evaluate(const std::string& problem_source, const std::string& problem_hash,
                                       const std::string& candidate_source) {
  // A candidate prefetched with this problem may have started already: it becomes this submission.
  const std::string hash = sha256_hex(candidate_source);
  const int64_t tag = next_private_tag_--;
  auto found = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) {
    return !e->asked_for && e->source_hash == hash && e->problem_source == problem_source;
  });
  if (found == entries_.end()) {
    submit({tag, problem_source, problem_hash, candidate_source});
  } else {
    Entry& entry = **found;
    entry.tag = tag;
    entry.asked_for = true;
    entry.problem_hash = problem_hash;
    entry.submitted = std::chrono::steady_clock::now();
    if (!entry.candidate) entry.candidate = launch(problem_source, candidate_source, settings_.fastpath);
  }
  auto finished = step([] { return false; }, [tag](const Entry& e) { return e.tag == tag; });
  if (!finished) return make_error("the evaluation of the candidate was lost");
  return std::move(finished->evaluation);
}

}  // namespace dicebench::harness
