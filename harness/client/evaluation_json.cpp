// One evaluation as JSON, for `dicebench eval --json` and the Python module.
#include "harness/client/evaluation_json.hpp"

namespace dicebench::harness {
namespace {

nlohmann::json timing_json(const std::optional<Timing>& t) {
  if (!t) return nullptr;
  return {{"median_ms", t->median_ms}, {"mean_ms", t->mean_ms}, {"std_ms", t->std_ms}, {"min_ms", t->min_ms},
          {"max_ms", t->max_ms},       {"p10_ms", t->p10_ms},   {"p90_ms", t->p90_ms}, {"trials", t->trials},
          {"stop_reason", t->stop_reason}, {"warm_calls", t->warm_calls}};
}

template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json compile_json(const std::optional<CompileInfo>& c) {
  if (!c) return nullptr;
  return {{"path", c->path}, {"reason", c->reason}, {"seconds", c->seconds}, {"log", c->log}, {"records", c->records},
          {"jit", c->jit}};
}

nlohmann::json profile_json(const std::optional<DeviceProfile>& p) {
  if (!p) return nullptr;
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : p->kernels)
    kernels.push_back({{"name", k.name}, {"kind", k.kind}, {"from_candidate", k.from_candidate},
                       {"launches_per_call", k.launches_per_call}, {"ms_per_call", k.ms_per_call}, {"grid", k.grid},
                       {"block", k.block}});
  return {{"busy_ms", p->busy_ms},
          {"host_ms", p->host_ms},
          {"call_host_ms", p->call_host_ms},
          {"launch_latency_ms", p->launch_latency_ms},
          {"span_ms", p->span_ms},
          {"candidate_share", p->candidate_share},
          {"kernels", kernels}};
}

// {"name": "detail", ...} in the order they were set.
nlohmann::json flags_json(const std::vector<std::pair<results::EvaluationFlag, std::string>>& flags) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [flag, detail] : flags) out[std::string(results::flag_name(flag))] = detail;
  return out;
}

}  // namespace

nlohmann::json timed_calls_json(const Evaluation& e) {
  return {{"calls", e.timed_calls},          {"checked", e.checked_calls},        {"batches", e.timed_batches},
          {"fresh_placements", e.fresh_placements}, {"loop_s", e.timing_loop_s}, {"batches_s", e.timing_batches_s},
          {"compares_s", e.timing_compares_s}};
}

nlohmann::json evaluation_json(const Evaluation& e, const std::string& device) {
  return {{"verdict", results::verdict_name(e.status)},
          {"compiled", e.compiled},
          {"correct", e.correct},
          {"device", device},
          {"runtime", timing_json(e.runtime)},
          {"baseline", timing_json(e.baseline)},
          {"speedup", optional_json(e.speedup)},
          {"speedup_mean", optional_json(e.speedup_mean)},
          {"max_abs_diff", optional_json(e.max_abs_diff)},
          {"mean_abs_diff", optional_json(e.mean_abs_diff)},
          {"failed_trial", optional_json(e.failed_trial)},
          {"failed_call", optional_json(e.failed_call)},
          {"failed_stage", e.failed_stage},
          {"margin", optional_json(e.margin)},
          {"flags", flags_json(e.flags)},
          {"memory_floor_ms", optional_json(e.memory_floor_ms)},
          {"io_bytes", {{"inputs", e.input_bytes}, {"outputs", e.output_bytes}}},
          {"timed_calls", timed_calls_json(e)},
          {"fastpath_outcome", e.fastpath_outcome ? *e.fastpath_outcome : nlohmann::json(nullptr)},
          {"problem_traits", e.problem_traits ? e.problem_traits->traits : nlohmann::json(nullptr)},
          {"log_tail", e.log_tail},
          {"error_class", e.error_class},
          {"error_message", e.error_message},
          {"seconds", e.seconds},
          {"latency_seconds", e.latency_seconds},
          {"phases", e.phases},
          {"toolchain", e.toolchain ? *e.toolchain : nlohmann::json(nullptr)},
          {"compile", compile_json(e.compile)},
          {"profile", profile_json(e.profile)}};
}

}  // namespace dicebench::harness
