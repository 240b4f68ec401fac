// Judging one candidate on the evaluator's device: the reference prepared, the problem's checks
// (traits, bandwidth) where not known yet, the candidate's load, init, correctness trials, timing
// (trial_calls.cpp) and check after timing, then the baseline, speedup and flags.
#include "harness/client/evaluator.hpp"

#include "core/spec/protocol.hpp"
#include "harness/client/evaluation_parts.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dicebench::harness {

using namespace parts;

Result<Got<Timing>> Evaluator::baseline(const std::string& job, const std::string& problem_hash) {
  if (auto it = baselines_.find(problem_hash); it != baselines_.end()) return Got<Timing>{it->second, false};
  if (settings_.shared_baselines) {
    auto shared = settings_.shared_baselines->get(problem_hash, [&] { return time_baseline(job, problem_hash); });
    if (shared) baselines_[problem_hash] = shared->value;
    return shared;
  }
  auto timing = time_baseline(job, problem_hash);
  if (!timing) return timing.error();
  baselines_[problem_hash] = *timing;
  return Got<Timing>{*timing, true};
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
  auto timed = alone_on_device([&] { return (*ref)->call(request.to_json(), settings_.reference_timeout); });
  if (timed.failure != CallFailure::none)
    return make_error(ErrorKind::harness_failure, "timing the reference failed: " + timed.message);
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
    // A worker reads its load request only after its hello: one that never said hello (it could not
    // open the device, died or hung in its own start-up) failed before the candidate's code reached
    // it. That is the harness's failure, not a verdict on the candidate (a sandbox that kept CUDA
    // from starting would otherwise be stored as every candidate crashing).
    if (const auto& hello = c.worker ? c.worker->hello() : nlohmann::json();
        c.worker && (!hello.is_object() || hello.value("type", "") != protocol::reply::kHello))
      return make_error(fmt::format("the candidate's worker did not start: {}", c.loaded->message));
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
  clock.lap(Phase::compile_wait);

  e.failed_stage = "init";
  job.deadline = std::chrono::steady_clock::now() + settings_.candidate_timeout;
  auto init = call_candidate(
      job,
      protocol::CandidateInit{
          .job = job.id, .init_seed = job.init_seed, .init_inputs = job.init_inputs, .model_mode = settings_.model_mode}
          .to_json());
  clock.lap(Phase::init);
  if (failed(init)) {
    DICEBENCH_TRY(charge_failure(e, init, "init", "", c.log()));
    return {};
  }
  e.failed_stage = "trials";
  // One secret trial after the first (the first is where a replay would have captured) gets its
  // inputs where no input of the job has been; any trial may, besides (kFreshOneIn).
  const auto fresh_trial = [&](int t) {
    const bool designated =
        settings_.trials > 1 &&
        t == 1 + static_cast<int>(mix(settings_.secret, job.problem_hash, kTrialPlacementDraws - 1) %
                                  static_cast<uint64_t>(settings_.trials - 1));
    return designated ||
           mix(settings_.secret, job.problem_hash, kTrialPlacementDraws + static_cast<uint64_t>(t)) % kFreshOneIn == 0;
  };
  for (int t = 0; t < settings_.trials; ++t) {
    auto ok = check_trial(job, t, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(t)), fresh_trial(t));
    if (!ok) return ok.error();
    if (!*ok) return {};
  }
  clock.lap(Phase::trials);

  // Every check passed: the verdict is correct, with how close it came (and its timing, when timed).
  const auto passed = [&](std::optional<Timing> runtime) {
    e.failed_stage.clear();
    e.verdict = Verdict::correct;
    e.correct = true;
    e.max_abs_diff = job.max_abs;
    e.mean_abs_diff = job.compared_count ? job.mean_abs_sum / job.compared_count : 0.0;
    e.margin = job.margin;
    e.runtime = std::move(runtime);
  };
  if (!settings_.timing) {  // correctness only: nothing is timed, so nothing can change once timing starts
    passed(std::nullopt);
    return {};
  }
  e.failed_stage = "timing";
  auto timed = alone_on_device([&] { return time_candidate(job); });
  if (!timed) return timed.error();
  if (!*timed) return {};  // the candidate failed: its verdict is decided
  const Timing runtime = **timed;
  clock.lap(Phase::timing);

  // A candidate that behaves differently once timing has started is caught here.
  e.failed_stage = "after_timing";
  job.note = " (in a call made after timing started)";
  const int after_trial = settings_.trials;
  auto ok = check_trial(job, after_trial, mix(settings_.secret, job.problem_hash, static_cast<uint64_t>(after_trial)),
                        fresh_trial(after_trial));
  if (!ok) return ok.error();
  if (!*ok) return {};
  clock.lap(Phase::after_timing);

  passed(runtime);
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
  if (judged.failure != CallFailure::none)
    return make_error(ErrorKind::harness_failure, "the reference worker failed: " + judged.message);
  if (!judged.reply->value("ok", false))
    return make_error(ErrorKind::problem_failed, "the reference program failed while its traits were judged: " +
                                                     judged.reply->value("message", ""));
  ProblemTraits traits = problem_traits_from_worker(*judged.reply);
  traits_[job.problem_hash] = traits;
  job.evaluation.traits_measured = std::move(traits);
  return {};
}

// The device's memory bandwidth, measured once by the reference worker on CUDA (or set), for the
// memory floor of timed candidates (none without timing).
Result<void> Evaluator::measure_bandwidth(Job& job) {
  if (bandwidth_ || !settings_.timing) return {};
  if (settings_.bandwidth > 0) {
    bandwidth_ = Bandwidth{settings_.bandwidth, "setting"};
    return {};
  }
  if (settings_.device != "cuda") return {};
  auto measured = alone_on_device([&] {
    return job.reference->call(protocol::ReferenceBandwidth{.job = job.id}.to_json(), settings_.reference_timeout);
  });
  if (measured.failure != CallFailure::none)
    return make_error(ErrorKind::harness_failure, "the reference worker failed: " + measured.message);
  bandwidth_ = bandwidth_from_worker(*measured.reply);
  if (bandwidth_->bytes_per_second <= 0)
    return make_error(ErrorKind::harness_failure, "the reference worker measured no memory bandwidth");
  job.evaluation.bandwidth_measured = bandwidth_;
  return {};
}

// run_candidate, then what qualifies a verdict: the baseline and speedup of a correct candidate,
// and the flags (core/spec/vocabulary.toml).
Result<void> Evaluator::judge(Job& job, Candidate& candidate) {
  auto ran = run_candidate(job);
  // One candidate per process, always. On a GPU it first zeroes the memory that held the job's
  // inputs and its outputs (a later job's process may be handed it as it is); a worker that does not
  // answer within kShutdownGrace is killed all the same.
  if (settings_.device == "cuda")
    candidate.worker->end();
  else
    candidate.worker->kill();
  if (!ran) return ran.error();
  Evaluation& e = job.evaluation;
  if (job.aliased_trial)
    e.flags.emplace_back(EvaluationFlag::output_aliases_input,
                         fmt::format("an output shares storage with an input (trial {})", *job.aliased_trial));
  if (e.margin && (e.correct || e.verdict == Verdict::output_mismatch) && is_borderline_margin(*e.margin))
    e.flags.emplace_back(EvaluationFlag::borderline, fmt::format("margin {:.3g}", *e.margin));
  if (!e.correct || !settings_.timing) return {};
  PhaseClock clock{&e.phases};
  auto base = baseline(job.id, job.problem_hash);
  clock.lap(Phase::baseline);
  if (!base) return base.error();
  e.baseline = base->value;
  e.baseline_measured = base->computed;
  if (e.runtime->median_ms > 0) e.speedup = e.baseline->median_ms / e.runtime->median_ms;
  if (e.runtime->mean_ms > 0) e.speedup_mean = e.baseline->mean_ms / e.runtime->mean_ms;
  if (e.speedup && *e.speedup > settings_.speedup_bound)
    e.flags.emplace_back(EvaluationFlag::excessive_speedup,
                         fmt::format("{:.2f}x, above {:g}x", *e.speedup, settings_.speedup_bound));
  if (bandwidth_) {
    e.memory_floor_ms =
        static_cast<double>(e.io_bytes.inputs + e.io_bytes.outputs) / bandwidth_->bytes_per_second * 1e3;
    if (e.runtime->median_ms < *e.memory_floor_ms)
      e.flags.emplace_back(
          EvaluationFlag::below_memory_floor,
          fmt::format("{:.4g} ms for {} bytes in and {} out; {:.4g} ms at {:.0f} GB/s", e.runtime->median_ms,
                      e.io_bytes.inputs, e.io_bytes.outputs, *e.memory_floor_ms, bandwidth_->bytes_per_second / 1e9));
  }
  return {};
}

// One candidate worker's whole evaluation: the reference prepared for its job folder, the problem's
// checks (traits, bandwidth) where not known yet, the candidate judged, the reference released.
Result<Evaluation> Evaluator::evaluate_with(const std::string& problem_source, const std::string& problem_hash,
                                            Candidate& candidate, bool alone) {
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
    job.evaluation.error_message =
        fmt::format("the candidate's worker broke the protocol (a malformed reply: {})", what);
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
    clock.lap(Phase::compile_wait);
    if (candidate.worker) candidate.worker->kill();
    return finish();
  }

  auto ref = reference();
  if (!ref) return ref.error();
  job.reference = *ref;
  // On a GPU other evaluators share, the checks run beside theirs (timing takes it whole, judging.cpp's
  // alone_on_device), until the reference has released the job.
  struct LeaseEnd {
    DeviceGate::Lease& lease;
    ~LeaseEnd() { lease.release(); }
  } lease_end{device_lease_};
  if (settings_.device_gate) {
    const auto waiting = std::chrono::steady_clock::now();
    device_lease_ = settings_.device_gate->acquire(alone ? DeviceGate::Use::whole : DeviceGate::Use::shared);
    job.evaluation.phases[std::string(phase_name(Phase::slot_wait))] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count();
  }
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
  clock.lap(Phase::prepare);
  if (prepared.failure != CallFailure::none)
    return make_error(ErrorKind::harness_failure, "the reference worker failed: " + prepared.message);
  if (!prepared.reply->value("ok", false))
    return make_error(ErrorKind::problem_failed, "the reference program failed: " +
                                                     prepared.reply->value("message", std::string("no reason given")));
  job.init_inputs = prepared.reply->value("init_inputs", "");
  struct Release {
    WorkerProcess* worker;
    std::string job;
    ~Release() {
      if (worker->alive())
        (void)worker->call(protocol::ReferenceRelease{.job = job}.to_json(), std::chrono::seconds(60));
    }
  } release{*ref, job.id};
  DICEBENCH_TRY(judge_traits(job));
  DICEBENCH_TRY(measure_bandwidth(job));
  clock.lap(Phase::problem_checks);
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
