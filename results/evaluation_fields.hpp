// The evaluation record's fields, defined once: every datum an evaluation carries, with its type,
// unit and meaning, and where each shape of the record holds it: the worker's replies
// (harness/worker/python/dicebench_harness/protocol.py), `dicebench eval --json` (evaluation_json.cpp,
// also the Python module's Evaluation.details), the Python module's Evaluation attributes
// (python/dicebench/_evaluate.py, which gets this table as dicebench.EVALUATION_FIELDS) and the
// results database (the evaluations table, its details JSON, and the tables beside it). C++ has no
// reflection: harness::Evaluation and results::NewEvaluation are written by hand, and
// tests/results/test_evaluation_fields.cpp and tests/python/test_package.py check every shape against
// this table, so a field added to one shape and not here fails them.
#pragma once

#include <array>
#include <string_view>

namespace dicebench::results {

enum class FieldType { verdict, boolean, integer, real, text, object, array };

struct EvaluationField {
  // The key in `dicebench eval --json`, "object.key" for a key inside one of its objects; "" when
  // only the database holds it.
  std::string_view json;
  // Where the results database keeps it: "evaluations.COLUMN", "evaluations.details.KEY[.KEY]"
  // (the details JSON), or another table ("evaluation_flags", "evaluation_kernels",
  // "problems.traits"); "" when not stored.
  std::string_view stored;
  // The attribute of the Python module's Evaluation; "" when only in its details.
  std::string_view python;
  // The worker reply field it is read from, "SPEC.KEY" with SPEC the type of a protocol.py Spec
  // (a reply such as "reference.compared", or a nested object: "timing", "profile", "compile");
  // "" when the host makes it.
  std::string_view worker;
  FieldType type;
  std::string_view unit;  // ms, s, bytes, count, ratio; "" where none applies
  std::string_view meaning;
};

inline constexpr auto kEvaluationFields = std::to_array<EvaluationField>({
    {"", "evaluations.sample", "", "", FieldType::integer, "", "the sample evaluated (samples.id)"},
    {"verdict", "evaluations.status", "verdict", "reference.compared.verdict", FieldType::verdict, "",
     "the verdict (results/verdict.hpp)"},
    {"compiled", "evaluations.compiled", "compiled", "", FieldType::boolean, "", "the candidate's module loaded"},
    {"correct", "evaluations.correct", "correct", "", FieldType::boolean, "", "the verdict is correct"},
    {"device", "evaluations.device", "device", "", FieldType::text, "", "cpu or cuda"},
    {"runtime.median_ms", "evaluations.runtime_ms", "", "timing.median_ms", FieldType::real, "ms",
     "median time of a timed call of the candidate"},
    {"runtime.mean_ms", "evaluations.runtime_mean_ms", "", "timing.mean_ms", FieldType::real, "ms", "its mean"},
    {"runtime.std_ms", "evaluations.runtime_std_ms", "", "timing.std_ms", FieldType::real, "ms", "its standard deviation"},
    {"runtime.min_ms", "evaluations.runtime_min_ms", "", "timing.min_ms", FieldType::real, "ms", "its minimum"},
    {"runtime.max_ms", "evaluations.runtime_max_ms", "", "timing.max_ms", FieldType::real, "ms", "its maximum"},
    {"runtime.p10_ms", "evaluations.runtime_p10_ms", "", "timing.p10_ms", FieldType::real, "ms", "its 10th percentile"},
    {"runtime.p90_ms", "evaluations.runtime_p90_ms", "", "timing.p90_ms", FieldType::real, "ms", "its 90th percentile"},
    {"runtime.trials", "evaluations.details.runtime_trials", "", "timing.trials", FieldType::integer, "count",
     "timed calls of the candidate"},
    {"runtime.stop_reason", "evaluations.details.runtime_stop_reason", "", "timing.stop_reason", FieldType::text, "",
     "why the candidate's timing stopped: converged (within eval.timing_spread), max_trials or budget"},
    {"runtime.warm_calls", "", "", "timing.warm_calls", FieldType::integer, "count",
     "untimed warm calls made just before the candidate's timed calls (eval.warm_calls)"},
    {"", "", "runtime", "", FieldType::object, "", "the candidate's timing (runtime.*) as a Timing"},
    {"baseline.median_ms", "evaluations.baseline_ms", "", "timing.median_ms", FieldType::real, "ms",
     "median time of a timed call of the reference (eager or torch.compile)"},
    {"baseline.mean_ms", "evaluations.baseline_mean_ms", "", "timing.mean_ms", FieldType::real, "ms", "its mean"},
    {"baseline.std_ms", "", "", "timing.std_ms", FieldType::real, "ms", "its standard deviation"},
    {"baseline.min_ms", "", "", "timing.min_ms", FieldType::real, "ms", "its minimum"},
    {"baseline.max_ms", "", "", "timing.max_ms", FieldType::real, "ms", "its maximum"},
    {"baseline.p10_ms", "", "", "timing.p10_ms", FieldType::real, "ms", "its 10th percentile"},
    {"baseline.p90_ms", "", "", "timing.p90_ms", FieldType::real, "ms", "its 90th percentile"},
    {"baseline.trials", "evaluations.details.baseline_trials", "", "timing.trials", FieldType::integer, "count",
     "timed calls of the reference"},
    {"baseline.stop_reason", "evaluations.details.baseline_stop_reason", "", "timing.stop_reason", FieldType::text, "",
     "why the reference's timing stopped; empty when the baseline came from the cache"},
    {"baseline.warm_calls", "", "", "timing.warm_calls", FieldType::integer, "count",
     "untimed warm calls made just before the reference's timed calls"},
    {"", "", "baseline", "", FieldType::object, "", "the reference's timing (baseline.*) as a Timing"},
    {"", "evaluations.details.baseline_source", "", "", FieldType::text, "",
     "measured (in this evaluation) or cache (the baselines table)"},
    {"speedup", "evaluations.speedup", "speedup", "", FieldType::real, "ratio", "baseline median / candidate median"},
    {"speedup_mean", "evaluations.speedup_mean", "", "", FieldType::real, "ratio", "baseline mean / candidate mean"},
    {"max_abs_diff", "evaluations.details.max_abs_diff", "max_abs_diff", "reference.compared.max_abs_diff",
     FieldType::real, "", "largest |candidate - reference| element (output units)"},
    {"mean_abs_diff", "evaluations.details.mean_abs_diff", "mean_abs_diff", "reference.compared.mean_abs_diff",
     FieldType::real, "", "mean |candidate - reference| (output units)"},
    {"failed_trial", "evaluations.details.failed_trial", "failed_trial", "", FieldType::integer, "",
     "the correctness trial that failed"},
    {"failed_call", "evaluations.details.failed_call", "", "", FieldType::integer, "",
     "the timed call whose checked outputs were wrong"},
    {"failed_stage", "evaluations.details.failed_stage", "", "", FieldType::text, "",
     "load, init, trials, timing or after_timing; empty when correct"},
    {"margin", "evaluations.margin", "margin", "reference.compared.margin", FieldType::real, "ratio",
     "worst compared element's |c - r| / (atol + rtol * |r|); at most 1 when correct"},
    {"flags", "evaluation_flags", "flags", "", FieldType::object, "",
     "flags that qualify the verdict (results/flags.hpp), each with what it saw"},
    {"memory_floor_ms", "evaluations.memory_floor_ms", "", "", FieldType::real, "ms",
     "reading the inputs and writing the outputs at the device's bandwidth"},
    {"io_bytes.inputs", "evaluations.details.io_bytes.inputs", "", "reference.trial_ready.input_bytes",
     FieldType::integer, "bytes", "one call's inputs"},
    {"io_bytes.outputs", "evaluations.details.io_bytes.outputs", "", "reference.trial_ready.output_bytes",
     FieldType::integer, "bytes", "one call's outputs"},
    {"timed_calls.calls", "evaluations.details.timed_calls.calls", "", "", FieldType::integer, "count",
     "calls made while timing the candidate"},
    {"timed_calls.checked", "evaluations.details.timed_calls.checked", "", "", FieldType::integer, "count",
     "of those, compared with the reference"},
    {"timed_calls.batches", "evaluations.details.timed_calls.batches", "", "", FieldType::integer, "count",
     "batches of those calls' inputs the reference made ahead (reference.batch)"},
    {"timed_calls.fresh_placements", "evaluations.details.timed_calls.fresh_placements", "", "", FieldType::integer,
     "count", "calls (correctness trials and timed calls) whose inputs were moved where no input of the job had been"},
    {"timed_calls.loop_s", "evaluations.details.timed_calls.loop_s", "", "", FieldType::real, "s",
     "the timing loop's wall time, from candidate.time to its reply"},
    {"timed_calls.batches_s", "evaluations.details.timed_calls.batches_s", "", "", FieldType::real, "s",
     "of it, the reference making the calls' inputs (the candidate waits)"},
    {"timed_calls.compares_s", "evaluations.details.timed_calls.compares_s", "", "", FieldType::real, "s",
     "of it, the reference comparing the checked calls' outputs (the candidate waits)"},
    {"fastpath_outcome", "evaluations.details.fastpath_outcome", "", "", FieldType::object, "",
     "what the NVRTC fast path said when torch's toolchain re-judged it (verdict, error_message, compile_path)"},
    {"problem_traits", "problems.traits", "", "reference.traits_judged.traits", FieldType::array, "",
     "the problem's degenerate traits (results/flags.hpp)"},
    {"log_tail", "evaluations.details.log_tail", "", "", FieldType::text, "", "the end of what the candidate printed"},
    {"error_class", "evaluations.error_class", "error_class", "", FieldType::text, "",
     "the verdict's name when not correct"},
    {"error_message", "evaluations.error_message", "error_message", "", FieldType::text, "", "why it failed"},
    {"seconds", "evaluations.details.seconds", "seconds", "", FieldType::real, "s",
     "the GPU's wall time on the candidate (its evaluation, a re-judge's, and waiting for its load with nothing else ready)"},
    {"latency_seconds", "evaluations.details.latency_seconds", "", "", FieldType::real, "s",
     "wall time from its submission to its final verdict (builds and queueing included)"},
    {"phases", "evaluations.details.phases", "", "", FieldType::object, "s",
     "wall time by phase (slot_wait, compile_wait, prepare, problem_checks, init, trials, timing, after_timing, "
     "baseline; fastpath_* of a re-judged fast-path evaluation)"},
    {"toolchain", "evaluations.details.toolchain", "", "", FieldType::object, "",
     "its builds with torch's toolchain in the toolchain pool (builds, cache_hits, failures, queued_seconds, "
     "build_seconds); absent without any"},
    {"compile.path", "evaluations.compile_path", "compile_path", "compile.path", FieldType::text, "",
     "how load_inline calls were built: nvrtc, fallback, mixed or none"},
    {"compile.reason", "evaluations.compile_reason", "", "compile.reason", FieldType::text, "", "why that way"},
    {"compile.seconds", "evaluations.compile_seconds", "", "compile.seconds", FieldType::real, "s", "compile time"},
    {"compile.log", "evaluations.compile_log", "", "compile.log", FieldType::text, "", "the compilers' log"},
    {"compile.records", "evaluations.details.compile_records", "", "compile.records", FieldType::array, "",
     "one record per load_inline call"},
    {"profile.busy_ms", "evaluations.device_busy_ms", "", "profile.busy_ms", FieldType::real, "ms",
     "union of a timed call's device intervals (median)"},
    {"profile.host_ms", "evaluations.host_wall_ms", "", "profile.host_ms", FieldType::real, "ms",
     "host wall time of a timed call until the device is synchronized (median)"},
    {"profile.call_host_ms", "evaluations.call_host_ms", "", "profile.call_host_ms", FieldType::real, "ms",
     "the host's own time in a timed call (median)"},
    {"profile.launch_latency_ms", "evaluations.launch_latency_ms", "", "profile.launch_latency_ms", FieldType::real,
     "ms", "the harness's start marker on the device -> the call's first device work (median)"},
    {"profile.span_ms", "evaluations.start_span_ms", "", "profile.span_ms", FieldType::real, "ms",
     "that marker -> the call's last device work (median)"},
    {"profile.candidate_share", "evaluations.custom_kernel_share", "", "profile.candidate_share", FieldType::real,
     "ratio", "share of device time in kernels compiled from the candidate"},
    {"profile.kernels", "evaluation_kernels", "", "profile.kernels", FieldType::array, "",
     "device work per kernel name and launch shape"},
    {"compile.jit", "evaluations.details.jit_compile", "", "candidate.outputs.jit", FieldType::object, "",
     "kernels a JIT DSL (Triton) compiled at their first launch, and the seconds it took (in no call's time)"},
    {"", "evaluations.details", "details", "", FieldType::object, "",
     "the record's other fields (database: JSON; Python: all of eval --json)"},
    {"", "evaluations.created", "", "", FieldType::text, "", "when it was stored, UTC"},
});

}  // namespace dicebench::results
