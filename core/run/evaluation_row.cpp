// The results row for one sample's evaluation, from the harness's Evaluation.
#include "core/run/evaluation_row.hpp"

#include "harness/client/evaluation_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace dicebench::run {

std::string stored_json(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

results::NewEvaluation extraction_failed_row(int64_t sample, const std::string& device) {
  results::NewEvaluation row;
  row.sample = sample;
  row.status = results::Verdict::extraction_failed;
  row.device = device;
  row.error_class = "extraction_failed";
  row.error_message = "the completion holds no code block";
  return row;
}

results::NewEvaluation evaluation_row(int64_t sample, const harness::Evaluation& e, const std::string& device) {
  results::NewEvaluation row;
  for (const auto& [flag, detail] : e.flags) row.flags.push_back({flag, detail});
  row.sample = sample;
  row.status = e.status;
  row.compiled = e.compiled;
  row.correct = e.correct;
  row.device = device;
  if (e.runtime) {
    row.runtime_ms = e.runtime->median_ms;
    row.runtime_mean_ms = e.runtime->mean_ms;
    row.runtime_std_ms = e.runtime->std_ms;
    row.runtime_min_ms = e.runtime->min_ms;
    row.runtime_max_ms = e.runtime->max_ms;
    row.runtime_p10_ms = e.runtime->p10_ms;
    row.runtime_p90_ms = e.runtime->p90_ms;
  }
  if (e.baseline) {
    row.baseline_ms = e.baseline->median_ms;
    row.baseline_mean_ms = e.baseline->mean_ms;
  }
  row.speedup = e.speedup;
  row.speedup_mean = e.speedup_mean;
  row.margin = e.margin;
  row.memory_floor_ms = e.memory_floor_ms;
  if (!e.error_class.empty()) row.error_class = e.error_class;
  if (!e.error_message.empty()) row.error_message = e.error_message.substr(0, 8000);
  nlohmann::json details = {{"seconds", e.seconds}, {"latency_seconds", e.latency_seconds}, {"phases", e.phases}};
  if (e.toolchain) details["toolchain"] = *e.toolchain;
  if (e.max_abs_diff) details["max_abs_diff"] = *e.max_abs_diff;
  if (e.mean_abs_diff) details["mean_abs_diff"] = *e.mean_abs_diff;
  if (e.failed_trial) details["failed_trial"] = *e.failed_trial;
  if (e.failed_call) details["failed_call"] = *e.failed_call;
  if (!e.failed_stage.empty()) details["failed_stage"] = e.failed_stage;
  if (e.timed_calls) details["timed_calls"] = harness::timed_calls_json(e);
  if (e.input_bytes || e.output_bytes) details["io_bytes"] = {{"inputs", e.input_bytes}, {"outputs", e.output_bytes}};
  if (e.fastpath_outcome) details["fastpath_outcome"] = *e.fastpath_outcome;
  if (e.compile && e.compile->jit.value("count", 0) > 0) details["jit_compile"] = e.compile->jit;
  if (e.runtime) {
    details["runtime_trials"] = e.runtime->trials;
    details["runtime_stop_reason"] = e.runtime->stop_reason;
  }
  if (e.baseline) {
    details["baseline_trials"] = e.baseline->trials;
    details["baseline_stop_reason"] = e.baseline->stop_reason;
    details["baseline_source"] = e.baseline_measured ? "measured" : "cache";
  }
  if (!e.log_tail.empty()) details["log_tail"] = e.log_tail;
  if (e.compile) {
    row.compile_path = e.compile->path;
    if (!e.compile->reason.empty()) row.compile_reason = e.compile->reason;
    row.compile_seconds = e.compile->seconds;
    if (!e.compile->log.empty()) row.compile_log = e.compile->log;
    nlohmann::json records = e.compile->records;  // their errors are in compile_log already
    for (auto& record : records)
      if (record.is_object()) record.erase("error");
    details["compile_records"] = std::move(records);
  }
  if (e.profile) {
    row.device_busy_ms = e.profile->busy_ms;
    row.host_wall_ms = e.profile->host_ms;
    row.call_host_ms = e.profile->call_host_ms;
    row.launch_latency_ms = e.profile->launch_latency_ms;
    row.start_span_ms = e.profile->span_ms;
    row.custom_kernel_share = std::clamp(e.profile->candidate_share, 0.0, 1.0);
    for (const auto& k : e.profile->kernels)
      row.kernels.push_back({k.name, k.kind, k.from_candidate, k.launches_per_call, k.ms_per_call, k.grid, k.block});
  }
  row.details_json = stored_json(details);
  return row;
}

}  // namespace dicebench::run
