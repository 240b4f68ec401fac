// Evaluates one candidate against its problem through isolated reference and candidate workers.
#include "harness/client/evaluator.hpp"

#include "core/base/sha256.hpp"
#include "harness/client/evaluation_parts.hpp"
#include "core/spec/protocol.hpp"
#include "results/evaluation_phases.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dicebench::harness {

using namespace parts;
namespace phases = results::phases;

// A submission (or a prefetched candidate, its problem not known yet) until its verdict is final.
struct Evaluator::Entry {
  int64_t tag = 0;
  bool has_problem = false;
  std::string problem_source, problem_hash, candidate_source, source_hash;
  std::unique_ptr<Candidate> candidate;  // launched once there is room (or at once for a re-judge)
  std::optional<Evaluation> fastpath;    // the fast path's evaluation, while torch's toolchain re-judges
  std::chrono::steady_clock::time_point submitted;
  bool on_device = false;                // being judged (evaluate_with)
  double slot_seconds = 0;               // the GPU's time on it so far
  double waited_seconds = 0;             // the GPU's time waiting for it, nothing else being ready
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
    for (const auto& path : worker_runtime_paths(settings_.worker_executable)) settings_.sandbox.read_only.push_back(path);
}

Evaluator::~Evaluator() {
  entries_.clear();  // their candidates' loaders end before what they signal goes
  spares_.clear();
  if (reference_ && reference_->alive()) (void)reference_->call(protocol::Shutdown{}.to_json(), std::chrono::seconds(5));
}

ToolchainBuildSettings toolchain_build_settings(const EvaluationSettings& settings) {
  ToolchainBuildSettings t;
  t.worker_executable = settings.worker_executable;
  t.cache_dir = settings.toolchain_cache.empty() ? default_toolchain_cache() : settings.toolchain_cache;
  t.work_root = settings.work_root;
  t.sandbox = settings.sandbox;
  if (settings.sandbox.mode != "off")
    for (const auto& path : worker_runtime_paths(settings.worker_executable)) t.sandbox.read_only.push_back(path);
  // A build keeps one to two cores busy (torch's two translation units, then the link): half the
  // cores leaves the rest to candidates' workers and to timing.
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  t.jobs = settings.toolchain_jobs > 0 ? settings.toolchain_jobs : std::max(1, cores / 2);
  t.timeout = settings.toolchain_timeout;
  return t;
}

Result<void> Evaluator::spawn_reference() {
  if (reference_ && reference_->alive()) return {};
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

Result<Timing> Evaluator::baseline(const std::string& job, const std::string& problem_hash, bool* measured) {
  *measured = false;
  if (auto it = baselines_.find(problem_hash); it != baselines_.end()) return it->second;
  if (settings_.shared_baselines) {
    auto shared = settings_.shared_baselines->get(problem_hash, [&] { return time_baseline(job, problem_hash); }, measured);
    if (shared) baselines_[problem_hash] = *shared;
    return shared;
  }
  auto timing = time_baseline(job, problem_hash);
  if (!timing) return timing;
  baselines_[problem_hash] = *timing;
  *measured = true;
  return timing;
}

Result<Timing> Evaluator::time_baseline(const std::string& job, const std::string& problem_hash) {
  auto ref = reference();
  if (!ref) return ref.error();
  // Always with warm calls (kTimingInputs, part of the baseline cache's key), whatever eval.warm_calls says.
  const protocol::ReferenceTime request{.warmup = settings_.warmup,
                                        .min_trials = settings_.min_trials,
                                        .max_trials = settings_.max_trials,
                                        .budget_s = settings_.budget_seconds,
                                        .target_rel_ci = settings_.target_rel_ci,
                                        .warm_calls = true,
                                        .job = job,
                                        .seed = mix(settings_.secret, problem_hash, kBaselineSeed),
                                        .method = settings_.baseline_method};
  auto timed = (*ref)->call(request.to_json(), settings_.reference_timeout);
  if (timed.failure != CallFailure::none) return make_error(ErrorKind::harness_failure, "timing the reference failed: " + timed.message);
  return timing_from_worker(timed.reply->at("timing"));
}

// The candidate's load (waited for where it has not ended), as read_load judges it.
Result<bool> Evaluator::judge_load(Evaluation& e, Candidate& c) {
  await_load(c);
  launch_ahead();  // once this candidate has compiled, so it never waits on the ones behind it
  top_up_spares();
  return read_load(e, c);
}

// The candidate's ended load: its compile's record kept, a failure charged. true when it loaded.
Result<bool> Evaluator::read_load(Evaluation& e, Candidate& c) {
  e.failed_stage = "load";
  e.toolchain = c.toolchain_use();
  note_fastpath_calls(e, *c.loaded);
  if (!c.loaded->reply || c.loaded->failure != CallFailure::none) {
    DICEBENCH_TRY(charge_failure(e, *c.loaded, "start-up and compile", "", c.log()));
    return false;
  }
  if (c.loaded->reply->contains("compile")) e.compile = compile_info_from_worker(c.loaded->reply->at("compile"));
  if (failed(*c.loaded)) {
    DICEBENCH_TRY(charge_failure(e, *c.loaded, "load", "", c.log()));
    return false;  // not compiled, as KernelBench counts it: the candidate's module did not load
  }
  e.compiled = true;
  return true;
}

// A call of the candidate after its load: its compile requests served (a load_inline call in its
// constructor or forward), a build's time limit charged as a timeout.
CallResult Evaluator::call_candidate(Job& job, const nlohmann::json& request) {
  Candidate& c = *job.candidate;
  CallResult result;
  if (!c.worker->send(request)) {
    result.failure = CallFailure::crashed;
    result.message = "the candidate worker ended before it read its request";
    return result;
  }
  result = c.worker->receive(std::max(remaining(job.deadline), std::chrono::milliseconds(1)),
                             compile_requests(c, std::chrono::steady_clock::now() + settings_.compile_timeout));
  c.charge_toolchain_timeout(result);
  job.evaluation.toolchain = c.toolchain_use();
  note_fastpath_calls(job.evaluation, result);
  return result;
}

// The candidate's side of an evaluation once the reference is prepared: load (compile), init,
// correctness trials, timing, a check after timing. Leaves the verdict in job.evaluation.
Result<void> Evaluator::run_candidate(Job& job) {
  Evaluation& e = job.evaluation;
  Candidate& c = *job.candidate;
  PhaseClock clock{&e.phases};
  auto loaded = judge_load(e, c);
  if (!loaded) return loaded.error();
  if (!*loaded) return {};
  clock.lap(phases::kCompileWait);

  e.failed_stage = "init";
  job.deadline = std::chrono::steady_clock::now() + settings_.candidate_timeout;
  auto init = call_candidate(job, protocol::CandidateInit{.job = job.id,
                                                          .init_seed = job.init_seed,
                                                          .init_inputs = job.init_inputs,
                                                          .model_mode = settings_.model_mode}
                                      .to_json());
  clock.lap(phases::kInit);
  if (failed(init)) {
    DICEBENCH_TRY(charge_failure(e, init, "init", "", c.log()));
    return {};
  }
  e.failed_stage = "trials";
  // One secret trial after the first (the first is where a replay would have captured) gets its
  // inputs where no input of the job has been; any trial may, besides (kFreshOneIn).
  const auto fresh_trial = [&](int t) {
    const bool designated = settings_.trials > 1 &&
                            t == 1 + static_cast<int>(mix(settings_.secret, job.problem_hash, kTrialPlacementDraws - 1) %
                                                      static_cast<uint64_t>(settings_.trials - 1));
    return designated || mix(settings_.secret, job.problem_hash, kTrialPlacementDraws + static_cast<uint64_t>(t)) % kFreshOneIn == 0;
  };
  for (int t = 0; t < settings_.trials; ++t) {
    auto ok = check_trial(job, t, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(t)), fresh_trial(t));
    if (!ok) return ok.error();
    if (!*ok) return {};
  }
  clock.lap(phases::kTrials);

  e.failed_stage = "timing";
  Timing runtime;
  auto timed = time_candidate(job, &runtime);
  if (!timed) return timed.error();
  if (!*timed) return {};
  clock.lap(phases::kTiming);

  // A candidate that behaves differently once timing has started is caught here.
  e.failed_stage = "after_timing";
  job.note = " (in a call made after timing started)";
  const int after_trial = settings_.trials;
  auto ok = check_trial(job, after_trial, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(after_trial)),
                        fresh_trial(after_trial));
  if (!ok) return ok.error();
  if (!*ok) return {};
  clock.lap(phases::kAfterTiming);

  e.failed_stage.clear();
  e.verdict = Verdict::correct;
  e.correct = true;
  e.max_abs_diff = job.max_abs;
  e.mean_abs_diff = job.compared_count ? job.mean_abs_sum / job.compared_count : 0.0;
  e.margin = job.margin;
  e.runtime = runtime;
  return {};
}

std::optional<ProblemTraits> Evaluator::traits(const std::string& problem_hash) const {
  const auto it = traits_.find(problem_hash);
  return it == traits_.end() ? std::nullopt : std::optional<ProblemTraits>(it->second);
}

// The problem's degenerate traits, judged once per problem from the reference alone.
Result<void> Evaluator::judge_traits(Job& job) {
  if (traits_.count(job.problem_hash)) return {};
  protocol::ReferenceTraits request{.job = job.id};
  for (int draw = 0; draw < kTraitDraws; ++draw)
    request.seeds.push_back(mix(settings_.secret, job.problem_hash, kTraitSeeds + static_cast<uint64_t>(draw)));
  auto judged = job.reference->call(request.to_json(), settings_.reference_timeout);
  if (judged.failure != CallFailure::none) return make_error(ErrorKind::harness_failure, "the reference worker failed: " + judged.message);
  if (!judged.reply->value("ok", false))
    return make_error(ErrorKind::harness_failure, "the reference program failed while its traits were judged: " + judged.reply->value("message", ""));
  ProblemTraits traits = problem_traits_from_worker(*judged.reply);
  traits_[job.problem_hash] = traits;
  job.evaluation.traits_measured = std::move(traits);
  return {};
}

// The device's memory bandwidth, measured once by the reference worker on CUDA (or set).
Result<void> Evaluator::measure_bandwidth(Job& job) {
  if (bandwidth_) return {};
  if (settings_.bandwidth > 0) {
    bandwidth_ = Bandwidth{settings_.bandwidth, "setting"};
    return {};
  }
  if (settings_.device != "cuda") return {};
  auto measured = job.reference->call(protocol::ReferenceBandwidth{.job = job.id}.to_json(), settings_.reference_timeout);
  if (measured.failure != CallFailure::none) return make_error(ErrorKind::harness_failure, "the reference worker failed: " + measured.message);
  bandwidth_ = bandwidth_from_worker(*measured.reply);
  if (bandwidth_->bytes_per_second <= 0) return make_error(ErrorKind::harness_failure, "the reference worker measured no memory bandwidth");
  job.evaluation.bandwidth_measured = bandwidth_;
  return {};
}

// run_candidate, then what qualifies a verdict: the baseline and speedup of a correct candidate,
// and the flags (core/spec/vocabulary.toml).
Result<void> Evaluator::judge(Job& job, Candidate& candidate) {
  auto ran = run_candidate(job);
  candidate.worker->kill();  // one candidate per process, always
  if (!ran) return ran.error();
  Evaluation& e = job.evaluation;
  if (job.aliased_trial)
    e.flags.emplace_back(EvaluationFlag::output_aliases_input, fmt::format("an output shares storage with an input (trial {})", *job.aliased_trial));
  if (e.margin && (e.correct || e.verdict == Verdict::output_mismatch) && is_borderline_margin(*e.margin))
    e.flags.emplace_back(EvaluationFlag::borderline, fmt::format("margin {:.3g}", *e.margin));
  if (!e.correct) return {};
  PhaseClock clock{&e.phases};
  auto base = baseline(job.id, job.problem_hash, &e.baseline_measured);
  clock.lap(phases::kBaseline);
  if (!base) return base.error();
  e.baseline = *base;
  if (e.runtime->median_ms > 0) e.speedup = base->median_ms / e.runtime->median_ms;
  if (e.runtime->mean_ms > 0) e.speedup_mean = base->mean_ms / e.runtime->mean_ms;
  if (e.speedup && *e.speedup > settings_.speedup_bound)
    e.flags.emplace_back(EvaluationFlag::excessive_speedup, fmt::format("{:.2f}x, above {:g}x", *e.speedup, settings_.speedup_bound));
  if (bandwidth_) {
    e.memory_floor_ms = static_cast<double>(e.io_bytes.inputs + e.io_bytes.outputs) / bandwidth_->bytes_per_second * 1e3;
    if (e.runtime->median_ms < *e.memory_floor_ms)
      e.flags.emplace_back(EvaluationFlag::below_memory_floor,
                           fmt::format("{:.4g} ms for {} bytes in and {} out; {:.4g} ms at {:.0f} GB/s", e.runtime->median_ms,
                                       e.io_bytes.inputs, e.io_bytes.outputs, *e.memory_floor_ms, bandwidth_->bytes_per_second / 1e9));
  }
  return {};
}

namespace {

// Whether a load's reply says the candidate loaded (a malformed one does not).
bool load_succeeded(const CallResult& loaded) {
  if (loaded.failure != CallFailure::none || !loaded.reply) return false;
  const auto ok = loaded.reply->find("ok");
  return ok != loaded.reply->end() && *ok == true;
}

// Verdicts of a candidate built on the fast path that torch's toolchain re-judges: failures where
// the fast path's own glue (argument conversion, the ATen shim) could be the cause. A failure its
// last reply showed to come before any call of what the fast path built cannot be (a crash says
// nothing of what ran, and is re-judged).
bool fastpath_could_cause(const Evaluation& e) {
  if (!e.compile || (e.compile->path != "nvrtc" && e.compile->path != "mixed")) return false;
  if (e.verdict == Verdict::crashed) return true;
  const bool failed = e.verdict == Verdict::runtime_error || e.verdict == Verdict::shape_mismatch || e.verdict == Verdict::dtype_mismatch;
  return failed && (!e.fastpath_calls || *e.fastpath_calls > 0);
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
  for (const auto& [phase, seconds] : fast.phases) toolchain.phases[std::string(phases::kRejudgedPrefix) + phase] = seconds;
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
  entry->has_problem = true;
  entry->problem_source = std::move(submission.problem_source);
  entry->problem_hash = std::move(submission.problem_hash);
  entry->candidate_source = std::move(submission.candidate_source);
  entry->source_hash = sha256_hex(entry->candidate_source);
  entry->submitted = std::chrono::steady_clock::now();
  entries_.push_back(std::move(entry));
  launch_ahead();
}

void Evaluator::prefetch(const std::string& candidate_source) {
  auto entry = std::make_unique<Entry>();
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
    if (!c) ++held.queued;
    else if (c->load_done || !c->worker) ++held.loaded;
    else if (c->toolchain_waiting) ++held.toolchain_waiting;
    else ++held.loading;
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
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(), [](const auto& e) { return e->has_problem; }));
}

void Evaluator::launch_ahead() {
  rejudge_failed_loads();
  Held h = held();
  for (auto& entry : entries_) {
    if (h.loading >= settings_.prefetch || h.loading + h.loaded >= ahead_limit()) break;
    if (entry->candidate) continue;
    entry->candidate = launch(entry->candidate_source, settings_.fastpath);
    ++h.loading;
  }
}

// A fast-path candidate whose load failed as torch's toolchain must re-judge needs no device for
// that verdict: its re-judge starts at once, not once the device takes it. The device then judges
// the re-judge alone, and step() keeps its verdict with the fast path's beside it.
void Evaluator::rejudge_failed_loads() {
  if (!settings_.confirm_fastpath_failures) return;
  for (auto& entry : entries_) {
    Candidate* c = entry->candidate.get();
    if (entry->on_device || entry->fastpath || !c || !c->fastpath || !c->load_done || load_succeeded(*c->loaded)) continue;
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
    entry->candidate = launch(entry->candidate_source, /*fastpath=*/false);
  }
}

Evaluator::Entry* Evaluator::ready_entry(const std::function<bool()>& stopping, const std::function<bool(const Entry&)>& wanted) {
  while (!stopping()) {
    launch_ahead();
    Entry* first_ready = nullptr;
    Entry* same_problem = nullptr;
    Entry* first_unlaunched = nullptr;
    bool loading = false;
    for (auto& entry : entries_) {
      if (!entry->has_problem || !wanted(*entry)) continue;
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
      first_unlaunched->candidate = launch(first_unlaunched->candidate_source, settings_.fastpath);
      continue;
    }
    std::unique_lock lock(ready_mutex_);
    ready_signal_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return nullptr;
}

std::optional<Evaluator::Finished> Evaluator::step(const std::function<bool()>& stopping,
                                                   const std::function<bool(const Entry&)>& wanted) {
  start_reference();  // starting while the candidates' workers start, not before them
  while (true) {
    const auto waiting = std::chrono::steady_clock::now();
    Entry* entry = ready_entry(stopping, wanted);
    if (!entry) return std::nullopt;
    const auto started = std::chrono::steady_clock::now();
    entry->waited_seconds += std::chrono::duration<double>(started - waiting).count();
    entry->on_device = true;
    auto evaluated = evaluate_with(entry->problem_source, entry->problem_hash, *entry->candidate);
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
    // The compile path never decides a verdict: a failure the fast path's glue could have caused is
    // judged again with torch's toolchain (its build in the toolchain pool while the GPU judges
    // others), and the toolchain's verdict is kept.
    if (!entry->fastpath && settings_.confirm_fastpath_failures && fastpath_could_cause(e)) {
      entry->fastpath = std::move(e);
      entry->candidate.reset();
      entry->candidate = launch(entry->candidate_source, /*fastpath=*/false);
      continue;
    }
    if (entry->fastpath) e = merge_rejudge(std::move(*entry->fastpath), std::move(e));
    e.seconds = entry->slot_seconds;
    if (entry->waited_seconds > 0) e.phases[phases::kSlotWait] += entry->waited_seconds;
    e.latency_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - entry->submitted).count();
    finished.evaluation = std::move(e);
    entries_.erase(found);
    return finished;
  }
}

std::optional<Evaluator::Finished> Evaluator::next(const std::function<bool()>& stopping) {
  return step(stopping, [](const Entry&) { return true; });
}

Result<Evaluation> Evaluator::evaluate(const std::string& problem_source, const std::string& problem_hash,
                                       const std::string& candidate_source) {
  // A prefetched candidate's worker may have started already: it becomes this submission.
  const std::string hash = sha256_hex(candidate_source);
  const int64_t tag = next_private_tag_--;
  auto found = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return !e->has_problem && e->source_hash == hash; });
  if (found == entries_.end()) {
    submit({tag, problem_source, problem_hash, candidate_source});
  } else {
    Entry& entry = **found;
    entry.tag = tag;
    entry.has_problem = true;
    entry.problem_source = problem_source;
    entry.problem_hash = problem_hash;
    entry.submitted = std::chrono::steady_clock::now();
    if (!entry.candidate) entry.candidate = launch(candidate_source, settings_.fastpath);
  }
  auto finished = step([] { return false; }, [tag](const Entry& e) { return e.tag == tag; });
  if (!finished) return make_error("the evaluation of the candidate was lost");
  return std::move(finished->evaluation);
}

// One candidate worker's whole evaluation: the reference prepared for its job folder, the problem's
// checks (traits, bandwidth) where not known yet, the candidate judged, the reference released.
Result<Evaluation> Evaluator::evaluate_with(const std::string& problem_source, const std::string& problem_hash,
                                            Candidate& candidate) {
  if (!candidate.start_error.empty()) return make_error(candidate.start_error);
  Job job;
  job.id = candidate.job;
  job.problem_hash = problem_hash;
  job.candidate = &candidate;
  job.init_seed = mix(settings_.secret, problem_hash, kInitSeedIndex);
  job.evaluation.device = settings_.device;
  // A reply whose fields are missing, of the wrong types or outside the vocabulary. The candidate's
  // code runs in its worker and can rewrite what that worker sends: the breach is charged to the
  // candidate, and never ends the run (nor a resumed one, which would meet the same candidate first).
  const auto breach = [&](const char* what) {
    if (candidate.worker) candidate.worker->kill();
    job.evaluation.verdict = Verdict::crashed;
    job.evaluation.error_class = verdict_name(Verdict::crashed);
    job.evaluation.correct = false;
    job.evaluation.error_message = fmt::format("the candidate's worker broke the protocol (a malformed reply: {})", what);
  };
  const auto finish = [&] {
    job.evaluation.problem_traits = traits(problem_hash);
    job.evaluation.log_tail = tail_of_file(candidate.folder->path / "candidate.log", 2000);
    return std::move(job.evaluation);
  };
  await_load(candidate);
  if (candidate.worker) candidate.worker->set_wait_hook([this] { launch_ahead(); });  // others load meanwhile
  // A candidate that did not load needs no reference, once the problem's own checks are done.
  const bool loaded = candidate.loaded && load_succeeded(*candidate.loaded);
  if (!loaded && traits_.count(problem_hash) && (bandwidth_ || settings_.bandwidth > 0 || settings_.device != "cuda")) {
    PhaseClock clock{&job.evaluation.phases};
    try {
      if (auto judged = judge_load(job.evaluation, candidate); !judged) breach(judged.error().message.c_str());
    } catch (const nlohmann::json::exception& error) {
      breach(error.what());
    }
    clock.lap(phases::kCompileWait);
    if (candidate.worker) candidate.worker->kill();
    return finish();
  }

  auto ref = reference();
  if (!ref) return ref.error();
  job.reference = *ref;
  const protocol::ReferencePrepare prepare{.job = job.id,
                                           .problem_source = problem_source,
                                           .device = settings_.device,
                                           .init_seed = job.init_seed,
                                           .work_dir = candidate.folder->path.string(),
                                           .problem_name = problem_hash,
                                           .tolerance = settings_.tolerance,
                                           .model_mode = settings_.model_mode};
  PhaseClock clock{&job.evaluation.phases};
  auto prepared = (*ref)->call(prepare.to_json(), settings_.reference_timeout);
  clock.lap(phases::kPrepare);
  if (prepared.failure != CallFailure::none) return make_error(ErrorKind::harness_failure, "the reference worker failed: " + prepared.message);
  if (!prepared.reply->value("ok", false))
    return make_error(ErrorKind::harness_failure,
                      "the reference program failed: " + prepared.reply->value("message", std::string("no reason given")));
  job.init_inputs = prepared.reply->value("init_inputs", "");
  struct Release {
    WorkerProcess* worker;
    std::string job;
    ~Release() {
      if (worker->alive()) (void)worker->call(protocol::ReferenceRelease{.job = job}.to_json(), std::chrono::seconds(60));
    }
  } release{*ref, job.id};
  DICEBENCH_TRY(judge_traits(job));
  DICEBENCH_TRY(measure_bandwidth(job));
  clock.lap(phases::kProblemChecks);
  // The candidate's worker runs the candidate's code, which can rewrite its replies: a breach of the
  // protocol is charged to the candidate; any other error is the harness's own.
  try {
    auto judged = judge(job, candidate);
    if (!judged && judged.error().kind != ErrorKind::protocol_breach) return judged.error();
    if (!judged) breach(judged.error().message.c_str());
  } catch (const nlohmann::json::exception& error) {
    breach(error.what());
  }
  return finish();
}

}  // namespace dicebench::harness
