// Evaluates one candidate against its problem through isolated reference and candidate workers.
#include "harness/client/evaluator.hpp"

#include "core/base/sha256.hpp"
#include "harness/client/evaluation_parts.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dicebench::harness {

using namespace parts;

Evaluator::Evaluator(EvaluationSettings settings) : settings_(std::move(settings)) {
  if (settings_.fastpath_cache.empty()) settings_.fastpath_cache = default_fastpath_cache();
  std::error_code ec;
  fs::create_directories(settings_.fastpath_cache, ec);  // candidates see it read-only: it must exist first
  settings_.sandbox.read_only.push_back(fs::weakly_canonical(settings_.fastpath_cache, ec).string());
  // The worker's own files stay visible where the sandbox's private /tmp would hide them (a
  // checkout under /tmp); so do dicebench-compile's, which live beside it.
  if (settings_.sandbox.mode != "off")
    for (const auto& path : worker_runtime_paths(settings_.worker_executable)) settings_.sandbox.read_only.push_back(path);
}

Evaluator::~Evaluator() {
  if (reference_ && reference_->alive()) (void)reference_->call({{"type", "shutdown"}}, std::chrono::seconds(5));
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
  return {};
}

void Evaluator::start_reference() { (void)spawn_reference(); }  // a failure shows again in reference()

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
  auto ref = reference();
  if (!ref) return ref.error();
  const nlohmann::json request = {{"type", "reference.time"}, {"job", job},
                                  {"seed", mix(settings_.secret, problem_hash, kBaselineSeed)},
                                  {"warmup", settings_.warmup}, {"min_trials", settings_.min_trials},
                                  {"max_trials", settings_.max_trials}, {"budget_s", settings_.budget_seconds},
                                  {"target_rel_ci", settings_.target_rel_ci}, {"method", settings_.baseline_method}};
  auto timed = (*ref)->call(request, settings_.reference_timeout);
  if (timed.failure != CallFailure::none) return make_error("timing the reference failed: " + timed.message);
  const Timing timing = timing_from(timed.reply->at("timing"));
  baselines_[problem_hash] = timing;
  *measured = true;
  return timing;
}

// The candidate's side of an evaluation once the reference is prepared: load (compile), init,
// correctness trials, timing, a check after timing. Leaves the verdict in job.evaluation.
Result<void> Evaluator::run_candidate(Job& job) {
  Evaluation& e = job.evaluation;
  Candidate& c = *job.candidate;
  PhaseClock clock{&e.phases};
  await_load(c);
  clock.lap("compile_wait");
  launch_ahead();  // once this candidate has compiled, so it never waits on the ones behind it
  top_up_spares();
  e.failed_stage = "load";
  if (!c.loaded->reply || c.loaded->failure != CallFailure::none) {
    charge_failure(e, *c.loaded, "start-up and compile", "", c.log());
    return {};
  }
  if (c.loaded->reply->contains("compile")) e.compile = compile_info_from(c.loaded->reply->at("compile"));
  if (failed(*c.loaded)) {
    charge_failure(e, *c.loaded, "load", "", c.log());
    return {};  // not compiled, as KernelBench counts it: the candidate's module did not load
  }
  e.compiled = true;

  e.failed_stage = "init";
  job.deadline = std::chrono::steady_clock::now() + settings_.candidate_timeout;
  auto init = c.worker->call({{"type", "candidate.init"}, {"job", job.id}, {"init_seed", job.init_seed},
                              {"init_inputs", job.init_inputs}, {"model_mode", settings_.model_mode}},
                             remaining(job.deadline));
  clock.lap("init");
  if (failed(init)) {
    charge_failure(e, init, "init", "", c.log());
    return {};
  }
  e.failed_stage = "trials";
  for (int t = 0; t < settings_.trials; ++t) {
    auto ok = check_trial(job, t, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(t)));
    if (!ok) return ok.error();
    if (!*ok) return {};
  }
  clock.lap("trials");

  e.failed_stage = "timing";
  Timing runtime;
  auto timed = time_candidate(job, &runtime);
  if (!timed) return timed.error();
  if (!*timed) return {};
  clock.lap("timing");

  // A candidate that behaves differently once timing has started is caught here.
  e.failed_stage = "after_timing";
  job.note = " (in a call made after timing started)";
  const int after_trial = settings_.trials;
  auto ok = check_trial(job, after_trial, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(after_trial)));
  if (!ok) return ok.error();
  if (!*ok) return {};
  clock.lap("after_timing");

  e.failed_stage.clear();
  e.status = Verdict::correct;
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
  nlohmann::json seeds = nlohmann::json::array();
  for (int draw = 0; draw < kTraitDraws; ++draw)
    seeds.push_back(mix(settings_.secret, job.problem_hash, kTraitSeeds + static_cast<uint64_t>(draw)));
  auto judged = job.reference->call({{"type", "reference.traits"}, {"job", job.id}, {"seeds", seeds}},
                                    settings_.reference_timeout);
  if (judged.failure != CallFailure::none) return make_error("the reference worker failed: " + judged.message);
  if (!judged.reply->value("ok", false))
    return make_error("the reference program failed while its traits were judged: " + judged.reply->value("message", ""));
  ProblemTraits traits{judged.reply->value("traits", nlohmann::json::array()),
                       judged.reply->value("details", nlohmann::json::object())};
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
  auto measured = job.reference->call({{"type", "reference.bandwidth"}, {"job", job.id}}, settings_.reference_timeout);
  if (measured.failure != CallFailure::none) return make_error("the reference worker failed: " + measured.message);
  bandwidth_ = Bandwidth{measured.reply->value("bytes_per_second", 0.0), measured.reply->value("method", "")};
  if (bandwidth_->bytes_per_second <= 0) return make_error("the reference worker measured no memory bandwidth");
  job.evaluation.bandwidth_measured = bandwidth_;
  return {};
}

// run_candidate, then what qualifies a verdict: the baseline and speedup of a correct candidate,
// and the flags (results/flags.hpp).
Result<void> Evaluator::judge(Job& job, Candidate& candidate) {
  auto ran = run_candidate(job);
  candidate.worker->kill();  // one candidate per process, always
  if (!ran) return ran.error();
  Evaluation& e = job.evaluation;
  if (job.aliased_trial)
    e.flags.emplace_back(results::EvaluationFlag::output_aliases_input, fmt::format("an output shares storage with an input (trial {})", *job.aliased_trial));
  if (e.margin && (e.correct || e.status == Verdict::output_mismatch) && results::is_borderline_margin(*e.margin))
    e.flags.emplace_back(results::EvaluationFlag::borderline, fmt::format("margin {:.3g}", *e.margin));
  if (!e.correct) return {};
  PhaseClock clock{&e.phases};
  auto base = baseline(job.id, job.problem_hash, &e.baseline_measured);
  clock.lap("baseline");
  if (!base) return base.error();
  e.baseline = *base;
  if (e.runtime->median_ms > 0) e.speedup = base->median_ms / e.runtime->median_ms;
  if (e.runtime->mean_ms > 0) e.speedup_mean = base->mean_ms / e.runtime->mean_ms;
  if (e.speedup && *e.speedup > settings_.speedup_bound)
    e.flags.emplace_back(results::EvaluationFlag::excessive_speedup, fmt::format("{:.2f}x, above {:g}x", *e.speedup, settings_.speedup_bound));
  if (bandwidth_) {
    e.memory_floor_ms = static_cast<double>(e.input_bytes + e.output_bytes) / bandwidth_->bytes_per_second * 1e3;
    if (e.runtime->median_ms < *e.memory_floor_ms)
      e.flags.emplace_back(results::EvaluationFlag::below_memory_floor,
                           fmt::format("{:.4g} ms for {} bytes in and {} out; {:.4g} ms at {:.0f} GB/s", e.runtime->median_ms,
                                       e.input_bytes, e.output_bytes, *e.memory_floor_ms, bandwidth_->bytes_per_second / 1e9));
  }
  return {};
}

namespace {

// Verdicts of a candidate built on the fast path that torch's toolchain re-judges: failures where
// the fast path's own glue (argument conversion, the ATen shim) could be the cause.
bool fastpath_could_cause(const Evaluation& e) {
  if (!e.compile || (e.compile->path != "nvrtc" && e.compile->path != "mixed")) return false;
  return e.status == Verdict::crashed || e.status == Verdict::runtime_error || e.status == Verdict::shape_mismatch ||
         e.status == Verdict::dtype_mismatch;
}

}  // namespace

Result<Evaluation> Evaluator::evaluate(const std::string& problem_source, const std::string& problem_hash,
                                       const std::string& candidate_source) {
  const auto started = std::chrono::steady_clock::now();
  start_reference();  // starting while the candidate's worker starts, not before it

  // The candidate's worker may have been launched ahead (the caller may take prefetched
  // candidates in any order, e.g. whichever compiled first).
  std::unique_ptr<Candidate> candidate;
  const std::string hash = sha256_hex(candidate_source);
  if (const auto found = std::find_if(ahead_.begin(), ahead_.end(), [&](const auto& c) { return c->source_hash == hash; });
      found != ahead_.end()) {
    candidate = std::move(*found);
    ahead_.erase(found);
  } else if (const auto queued = std::find(queued_.begin(), queued_.end(), candidate_source); queued != queued_.end()) {
    queued_.erase(queued);
  }
  if (!candidate) candidate = launch(candidate_source, settings_.fastpath);
  auto evaluated = evaluate_with(problem_source, problem_hash, *candidate);
  if (!evaluated) return evaluated.error();
  Evaluation e = std::move(*evaluated);

  // The compile path never decides a verdict: a failure the fast path's glue could have caused is
  // judged again with torch's toolchain, whose verdict is kept; a disagreement is flagged.
  if (settings_.confirm_fastpath_failures && fastpath_could_cause(e)) {
    std::unique_ptr<Candidate> again = launch(candidate_source, /*fastpath=*/false);
    auto rejudged = evaluate_with(problem_source, problem_hash, *again);
    if (!rejudged) return rejudged.error();
    Evaluation toolchain = std::move(*rejudged);
    toolchain.fastpath_outcome = nlohmann::json{{"verdict", results::verdict_name(e.status)}, {"error_message", e.error_message.substr(0, 2000)},
                                                {"compile_path", e.compile ? e.compile->path : "none"}};
    if (toolchain.status != e.status)
      toolchain.flags.emplace_back(results::EvaluationFlag::fastpath_disagreement,
                                   fmt::format("fast path: {}; torch's toolchain: {}", results::verdict_name(e.status),
                                               results::verdict_name(toolchain.status)));
    for (const auto& [phase, seconds] : e.phases) toolchain.phases["fastpath_" + phase] = seconds;
    if (!toolchain.traits_measured) toolchain.traits_measured = std::move(e.traits_measured);
    if (!toolchain.bandwidth_measured) toolchain.bandwidth_measured = std::move(e.bandwidth_measured);
    e = std::move(toolchain);
  }
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return e;
}

// One candidate worker's whole evaluation: the reference prepared for its job folder, the problem's
// checks (traits, bandwidth) where not known yet, the candidate judged, the reference released.
Result<Evaluation> Evaluator::evaluate_with(const std::string& problem_source, const std::string& problem_hash,
                                            Candidate& candidate) {
  if (!candidate.start_error.empty()) return make_error(candidate.start_error);
  auto ref = reference();
  if (!ref) return ref.error();

  Job job;
  job.id = candidate.job;
  job.problem_hash = problem_hash;
  job.candidate = &candidate;
  job.reference = *ref;
  job.init_seed = mix(settings_.secret, problem_hash, kInitSeedIndex);
  const nlohmann::json prepare = {{"type", "reference.prepare"}, {"job", job.id}, {"problem_source", problem_source},
                                  {"problem_name", problem_hash}, {"device", settings_.device}, {"init_seed", job.init_seed},
                                  {"work_dir", candidate.folder->path.string()}, {"tolerance", settings_.tolerance},
                                  {"model_mode", settings_.model_mode}};
  PhaseClock clock{&job.evaluation.phases};
  auto prepared = (*ref)->call(prepare, settings_.reference_timeout);
  clock.lap("prepare");
  if (prepared.failure != CallFailure::none) return make_error("the reference worker failed: " + prepared.message);
  if (!prepared.reply->value("ok", false))
    return make_error("the reference program failed: " + prepared.reply->value("message", std::string("no reason given")));
  job.init_inputs = prepared.reply->value("init_inputs", "");
  struct Release {
    WorkerProcess* worker;
    std::string job;
    ~Release() {
      if (worker->alive()) (void)worker->call({{"type", "reference.release"}, {"job", job}}, std::chrono::seconds(60));
    }
  } release{*ref, job.id};
  DICEBENCH_TRY(judge_traits(job));
  DICEBENCH_TRY(measure_bandwidth(job));
  clock.lap("problem_checks");
  // A reply whose fields are missing, of the wrong types or outside the vocabulary. The candidate's
  // code runs in its worker and can rewrite what that worker sends: the breach is charged to the
  // candidate, and never ends the run (nor a resumed one, which would meet the same candidate first).
  const auto breach = [&](const char* what) {
    if (candidate.worker) candidate.worker->kill();
    job.evaluation.status = Verdict::crashed;
    job.evaluation.error_class = results::verdict_name(Verdict::crashed);
    job.evaluation.correct = false;
    job.evaluation.error_message = fmt::format("the candidate's worker broke the protocol (a malformed reply: {})", what);
  };
  try {
    DICEBENCH_TRY(judge(job, candidate));
  } catch (const nlohmann::json::exception& error) {
    breach(error.what());
  } catch (const ProtocolBreach& error) {
    breach(error.what());
  }
  job.evaluation.problem_traits = traits(problem_hash);
  job.evaluation.log_tail = tail_of_file(candidate.folder->path / "candidate.log", 2000);
  return std::move(job.evaluation);
}

}  // namespace dicebench::harness
