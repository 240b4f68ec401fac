// The candidate's calls on the reference's inputs: correctness trials, and the timing loop on fresh
// inputs with its secret checked calls (PROTOCOL.md).
#include "core/spec/protocol.hpp"
#include "harness/client/evaluation_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <iterator>
#include <set>

namespace dicebench::harness {

using namespace parts;

// One trial: the reference makes inputs and keeps its outputs, the candidate runs, the reference
// compares. false once a verdict is decided (the candidate failed); errors are the harness's.
Result<bool> Evaluator::check_trial(Job& job, int trial, uint64_t seed, bool fresh_placement) {
  Evaluation& e = job.evaluation;
  auto inputs = job.reference->call(protocol::ReferenceTrial{.job = job.id, .trial = trial, .seed = seed}.to_json(),
                                    settings_.reference_timeout);
  if (inputs.failure != CallFailure::none)
    return make_error(ErrorKind::harness_failure, "the reference worker failed: " + inputs.message);
  if (!inputs.reply->value("ok", false))
    return make_error(ErrorKind::problem_failed, fmt::format("the reference program failed on trial {}: {}", trial,
                                                             inputs.reply->value("message", "")));
  e.io_bytes.inputs = std::max(e.io_bytes.inputs, inputs.reply->value("input_bytes", int64_t{0}));
  e.io_bytes.outputs = std::max(e.io_bytes.outputs, inputs.reply->value("output_bytes", int64_t{0}));
  const auto left = remaining(job.deadline);
  if (left.count() <= 0) {
    e.verdict = Verdict::timeout;
    e.error_class = verdict_name(e.verdict);
    e.error_message = fmt::format("the candidate used up its {:.0f} s", settings_.candidate_timeout.count() / 1000.0);
    return false;
  }
  auto outputs = call_candidate(
      job, protocol::CandidateForward{.job = job.id,
                                      .trial = trial,
                                      .inputs = inputs.reply->at("inputs"),
                                      .outputs_path =
                                          (job.candidate->folder->path / fmt::format("outputs-{}.pt", trial)).string(),
                                      .fresh_placement = fresh_placement}
               .to_json());
  if (fresh_placement) ++e.timed_calls.fresh_placements;
  note_jit(e, outputs);
  if (failed(outputs)) {
    DICEBENCH_TRY(charge_failure(e, outputs, fmt::format("trial {}", trial), job.note, job.candidate->log()));
    e.failed_trial = trial;
    return false;
  }
  if (outputs.reply->value("aliases_input", false)) job.aliased_trial = trial;
  auto compared = job.reference->call(
      protocol::ReferenceCompare{.job = job.id, .trial = trial, .outputs = outputs.reply->at("outputs")}.to_json(),
      settings_.reference_timeout);
  if (compared.failure != CallFailure::none)
    return make_error(ErrorKind::harness_failure, "the reference worker failed while comparing: " + compared.message);
  const nlohmann::json& c = *compared.reply;
  const auto verdict = compared_verdict(c);
  if (!verdict) return verdict.error();
  if (*verdict != Verdict::correct) {
    e.verdict = *verdict;
    e.error_class = verdict_name(e.verdict);
    e.failed_trial = trial;
    e.error_message = c.value("message", "") + job.note;
    e.max_abs_diff = number(c, "max_abs_diff");
    e.mean_abs_diff = number(c, "mean_abs_diff");
    e.margin = margin_of(c);
    return false;
  }
  job.note_compared(c);
  return true;
}

void Evaluator::Job::note_compared(const nlohmann::json& compared) {
  max_abs = std::max(max_abs, number(compared, "max_abs_diff").value_or(0.0));
  mean_abs_sum += number(compared, "mean_abs_diff").value_or(0.0);
  const auto m = margin_of(compared);
  margin = m && margin ? std::max(*m, *margin) : m ? m : margin;
  ++compared_count;
}

namespace {

inline constexpr uint64_t kMaskKeys = 6'000'000;  // + call: the key of the mask over its exported inputs
// Calls the reference makes ahead in one batch (fewer where the memory budget says so): a batch is
// made while the candidate waits, and calls made for a loop that stops sooner are let go.
inline constexpr int kBatchCalls = 32;

}  // namespace

// Timing on fresh inputs (PROTOCOL.md): the reference makes the inputs of a batch of upcoming calls
// in one request, each from a secret seed of its own, keeping its outputs for the calls that will
// be checked; the host hands them over one call at a time, with no reference round trip between
// calls except a checked call's comparison. After each call the candidate hands its outputs back,
// and a secret subset of the calls is compared with the reference's outputs for the same inputs, so
// an answer cached on an input's pointer, identity or contents fails. true with *runtime set when
// the candidate passed; false once a verdict is decided; errors are the harness's.
Result<std::optional<Timing>> Evaluator::time_candidate(Job& job) {
  Evaluation& e = job.evaluation;
  Candidate& c = *job.candidate;
  const int first_trial = settings_.trials + 1;  // timed call k is trial first_trial + k (trials + 0: after timing)
  // The most calls a loop makes (its warm-up, then each trial with its warm call), and the calls every
  // loop makes unless its budget runs out first (or it leaves out warm calls before long trials).
  const int per_trial = settings_.warm_calls ? 2 : 1;
  const int loop_calls = settings_.warmup + settings_.max_trials * per_trial;
  const int sure_calls = settings_.warmup + settings_.min_trials * per_trial;
  // Which calls are checked is secret: kMinChecks of the calls every loop makes, and each call with
  // probability 1/kCheckOneIn, those too: a candidate may tell a checked call after it (its answer
  // takes a comparison longer), and having seen the kMinChecks it must still expect any later call
  // to be checked.
  std::set<int> sure_checks;
  for (uint64_t draw = 0; static_cast<int>(sure_checks.size()) < std::min(kMinChecks, sure_calls); ++draw)
    sure_checks.insert(static_cast<int>(mix(settings_.secret, job.problem_hash, kCheckDraws + 1'000'000 + draw) %
                                        static_cast<uint64_t>(sure_calls)));
  const auto checked_draw = [&](int call) {
    return sure_checks.count(call) > 0 ||
           mix(settings_.secret, job.problem_hash, kCheckDraws + static_cast<uint64_t>(call)) % kCheckOneIn == 0;
  };
  // One of the sure checks gets its inputs where no input of the job has been (a loop cut short
  // before it places its first made-up checked call so); any call may, besides, checked or not.
  const int fresh_check = sure_checks.empty() ? -1 : [&] {
    auto it = sure_checks.begin();
    std::advance(it,
                 static_cast<long>(mix(settings_.secret, job.problem_hash, kPlacementDraws - 1) % sure_checks.size()));
    return *it;
  }();
  const auto fresh_draw = [&](int call) {
    return call == fresh_check ||
           mix(settings_.secret, job.problem_hash, kPlacementDraws + static_cast<uint64_t>(call)) % kFreshOneIn == 0;
  };
  bool fresh_check_made = false;  // a checked call placed fresh has been handed over
  struct Made {
    int call;
    nlohmann::json inputs;
    std::optional<uint64_t> mask_key;  // none: not masked
    bool fresh = false;                // placed where no input of the job has been
  };
  std::deque<Made> ready;  // made by the reference, not handed over yet: calls expected, expected + 1, ...
  std::set<int> checked;   // calls whose outputs the reference keeps and compares
  std::string harness_error;
  bool decided = false;  // a checked call failed: the verdict is set
  int expected = 0;      // the next call the candidate makes
  // Has the reference make the next `count` calls' inputs (all checked, or as drawn), replacing those
  // made before and not handed over; false after a failure (harness_error is then set).
  const auto make_batch = [&](int count, bool all_checked) -> bool {
    ready.clear();
    checked.erase(checked.lower_bound(expected), checked.end());
    nlohmann::json calls = nlohmann::json::array();
    for (int call = expected; call < expected + count; ++call)
      calls.push_back({{"trial", first_trial + call},
                       {"seed", mix(settings_.secret, job.problem_hash, kTimedCallSeeds + static_cast<uint64_t>(call))},
                       {"outputs", all_checked || checked_draw(call)},
                       {"mask_key", mix(settings_.secret, job.problem_hash, kMaskKeys + static_cast<uint64_t>(call))}});
    const auto batch_started = std::chrono::steady_clock::now();
    auto made = job.reference->call(
        protocol::ReferenceBatch{
            .job = job.id, .calls = calls, .budget_bytes = std::max<int64_t>(settings_.batch_bytes, 1)}
            .to_json(),
        settings_.reference_timeout);
    e.timed_calls.batches_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - batch_started).count();
    if (made.failure != CallFailure::none) {
      harness_error = "the reference worker failed: " + made.message;
      return false;
    }
    const nlohmann::json& r = *made.reply;
    if (!r.value("ok", false)) {
      harness_error =
          fmt::format("the reference program failed on timed call {}: {}", expected, r.value("message", ""));
      return false;
    }
    const int count_made = r.value("made", 0);
    if (count_made < 1 || count_made > count || !r.contains("inputs") ||
        r.at("inputs").size() != static_cast<size_t>(count_made)) {
      harness_error = fmt::format("the reference made {} of {} timed calls' inputs", count_made, count);
      return false;
    }
    ++e.timed_calls.batches;
    const bool masked = r.value("masked", false);
    for (int k = 0; k < count_made; ++k) {
      const auto& call = calls[static_cast<size_t>(k)];
      const int index = expected + k;
      const bool fresh = fresh_draw(index) || (all_checked && k == 0 && !fresh_check_made);
      ready.push_back({index, r.at("inputs")[static_cast<size_t>(k)],
                       masked ? std::optional(call.at("mask_key").get<uint64_t>()) : std::nullopt, fresh});
      if (call.at("outputs").get<bool>()) checked.insert(index);
    }
    e.io_bytes.inputs = std::max(e.io_bytes.inputs, r.value("input_bytes", int64_t{0}));
    e.io_bytes.outputs = std::max(e.io_bytes.outputs, r.value("output_bytes", int64_t{0}));
    return true;
  };
  const auto stop = [&] { return protocol::TimingStop{.job = job.id}.to_json(); };
  const auto hand_over = [&](Made& made) {
    if (made.fresh) {
      ++e.timed_calls.fresh_placements;
      if (checked.count(made.call)) fresh_check_made = true;
    }
  };
  const auto on_call_done = [&](const nlohmann::json& message) -> std::optional<nlohmann::json> {
    if (message.value("type", "") != protocol::reply::kCandidateCallDone) return std::nullopt;
    const int call = message.value("call", -1);
    if (call != expected || !message.contains("outputs")) return std::nullopt;
    // A loop makes at most loop_calls calls: a worker that asks for more (the host's time in
    // answering does not count against its time limit) breaks the protocol.
    if (message.value("more", false) && call + 1 >= loop_calls) return std::nullopt;
    ++expected;
    e.timed_calls.calls = expected;
    if (checked.count(call)) {
      const auto compare_started = std::chrono::steady_clock::now();
      auto compared = job.reference->call(
          protocol::ReferenceCompare{.job = job.id, .trial = first_trial + call, .outputs = message.at("outputs")}
              .to_json(),
          settings_.reference_timeout);
      e.timed_calls.compares_s +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - compare_started).count();
      if (compared.failure != CallFailure::none) {
        harness_error = "the reference worker failed while comparing: " + compared.message;
        return stop();
      }
      ++e.timed_calls.checked;
      const nlohmann::json& r = *compared.reply;
      const auto verdict = compared_verdict(r);
      if (!verdict) {
        harness_error = verdict.error().message;
        return stop();
      }
      if (*verdict != Verdict::correct) {
        e.verdict = *verdict;
        e.error_class = verdict_name(e.verdict);
        e.failed_call = call;
        e.error_message = fmt::format("timed call {}: {}", call, r.value("message", ""));
        e.max_abs_diff = number(r, "max_abs_diff");
        e.mean_abs_diff = number(r, "mean_abs_diff");
        e.margin = margin_of(r);
        decided = true;
        return stop();
      }
      job.note_compared(r);
    }
    const bool more = message.value("more", false);
    const int needed = std::max(kMinChecks, (expected + 9) / 10);
    if (!more && e.timed_calls.checked >= needed) return stop();
    if (!more) {
      // The loop is over with too few checked calls: checked calls make up the count (those made
      // ahead for the loop are let go, unless the next is checked).
      if ((ready.empty() || !checked.count(ready.front().call)) && !make_batch(needed - e.timed_calls.checked, true))
        return stop();
    } else if (ready.empty() && !make_batch(std::min(kBatchCalls, loop_calls - expected), false)) {
      return stop();
    }
    Made next = std::move(ready.front());
    ready.pop_front();
    hand_over(next);
    return protocol::TimingNext{.job = job.id,
                                .call = next.call,
                                .inputs = std::move(next.inputs),
                                .mask_key = next.mask_key,
                                .fresh_placement = next.fresh}
        .to_json();
  };
  const auto loop_started = std::chrono::steady_clock::now();
  if (!make_batch(std::min(kBatchCalls, loop_calls), false))
    return make_error(ErrorKind::harness_failure, harness_error);
  Made first = std::move(ready.front());
  ready.pop_front();
  hand_over(first);
  // The loop's budget leaves half the candidate's time limit for the rest: a slow machine makes
  // timing stop early (stop_reason "budget"), never a correct candidate run out of time.
  const double left_s = std::chrono::duration<double>(remaining(job.deadline)).count();
  const double budget_s = std::max(0.05, std::min(settings_.budget_seconds, left_s / 2));
  const nlohmann::json request = protocol::CandidateTime{.warmup = settings_.warmup,
                                                         .min_trials = settings_.min_trials,
                                                         .max_trials = settings_.max_trials,
                                                         .budget_s = budget_s,
                                                         .target_rel_ci = settings_.target_rel_ci,
                                                         .warm_calls = settings_.warm_calls,
                                                         .job = job.id,
                                                         .inputs = std::move(first.inputs),
                                                         .outputs_path = (c.folder->path / "outputs-timed.pt").string(),
                                                         .mask_key = first.mask_key,
                                                         .fresh_placement = first.fresh}
                                     .to_json();
  CallResult timed;
  if (!c.worker->send(request)) {
    timed.failure = CallFailure::crashed;
    timed.message = "the candidate worker ended before it read its request";
  } else {
    timed = c.worker->receive(std::max(remaining(job.deadline), std::chrono::milliseconds(1)), on_call_done,
                              /*handler_time_counts=*/false);
  }
  e.timed_calls.loop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_started).count();
  if (!harness_error.empty()) return make_error(ErrorKind::harness_failure, harness_error);
  if (decided) return std::optional<Timing>();
  note_jit(e, timed);
  if (failed(timed)) {
    DICEBENCH_TRY(charge_failure(e, timed, fmt::format("timing (call {})", e.timed_calls.calls), "", c.log()));
    return std::optional<Timing>();
  }
  if (timed.reply->value("stopped", false) || !timed.reply->contains("timing") ||
      !timed.reply->at("timing").is_object())
    return make_error(ErrorKind::protocol_breach, "the candidate ended timing without a result the host asked for");
  if (timed.reply->contains("profile") && timed.reply->at("profile").is_object())
    e.profile = device_profile_from_worker(timed.reply->at("profile"));
  return std::optional(timing_from_worker(timed.reply->at("timing")));
}

}  // namespace dicebench::harness
