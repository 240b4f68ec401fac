// Flat JSON records of samples, written and read back.
#include "results/sample_record.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "results/json_fields.hpp"

namespace dicebench::results {

nlohmann::ordered_json sample_record(const RunResults& run, const SampleResult& s) {
  const ProblemRow* problem = find_problem(run, s.key());
  nlohmann::ordered_json r;
  r["run"] = run.run.id;
  r["problem_id"] = s.problem_id;
  r["level"] = s.level;
  r["problem"] = problem ? nlohmann::ordered_json(problem->name) : nlohmann::ordered_json(nullptr);
  r["sample_index"] = s.sample_index;
  r["verdict"] = s.pending ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.verdict);
  r["has_candidate"] = s.has_candidate;
  r["compiled"] = s.compiled;
  r["correct"] = s.correct;
  r["speedup"] = or_null(s.speedup);
  r["runtime_ms"] = or_null(s.runtime_ms);
  r["runtime_mean_ms"] = or_null(s.runtime_mean_ms);
  r["runtime_std_ms"] = or_null(s.runtime_std_ms);
  r["runtime_min_ms"] = or_null(s.runtime_min_ms);
  r["runtime_max_ms"] = or_null(s.runtime_max_ms);
  r["runtime_p10_ms"] = or_null(s.runtime_p10_ms);
  r["runtime_p90_ms"] = or_null(s.runtime_p90_ms);
  r["baseline_ms"] = or_null(s.baseline_ms);
  r["baseline_mean_ms"] = or_null(s.baseline_mean_ms);
  r["runtime_trials"] = or_null(s.runtime_trials);
  r["custom_kernel_share"] = or_null(s.custom_kernel_share);
  r["compile_path"] = or_null(s.compile_path);
  r["device"] = or_null(s.device);
  r["error_class"] = or_null(s.error_class);
  r["error_message"] = or_null(s.error_message);
  r["margin"] = or_null(s.margin);
  r["memory_floor_ms"] = or_null(s.memory_floor_ms);
  nlohmann::ordered_json flags = nlohmann::ordered_json::array();
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  for (const SampleFlag& flag : s.flags) {
    flags.push_back(flag.name);
    details[flag.name] = flag.detail;
  }
  r["flags"] = std::move(flags);
  r["flag_details"] = std::move(details);
  r["problem_traits"] = or_null(s.problem_traits);
  r["failed_stage"] = or_null(s.failed_stage);
  r["infill_exact_match"] = or_null(s.infill_exact_match);
  r["infill_edit_distance"] = or_null(s.infill_edit_distance);
  return r;
}

Result<SampleResult> parse_sample_record(const nlohmann::json& r, const std::string& where) {
  try {
    SampleResult s;
    s.problem_id = r.at("problem_id").get<std::int64_t>();
    s.level = r.at("level").get<int>();
    s.sample_index = r.at("sample_index").get<int>();
    s.has_candidate = r.at("has_candidate").get<bool>();
    const auto verdict = optional_field<std::string>(r, "verdict");
    s.pending = !verdict;
    s.verdict = verdict.value_or("");
    s.compiled = r.at("compiled").get<bool>();
    s.correct = r.at("correct").get<bool>();
    s.speedup = optional_field<double>(r, "speedup");
    s.runtime_ms = optional_field<double>(r, "runtime_ms");
    s.runtime_mean_ms = optional_field<double>(r, "runtime_mean_ms");
    s.runtime_std_ms = optional_field<double>(r, "runtime_std_ms");
    s.runtime_min_ms = optional_field<double>(r, "runtime_min_ms");
    s.runtime_max_ms = optional_field<double>(r, "runtime_max_ms");
    s.runtime_p10_ms = optional_field<double>(r, "runtime_p10_ms");
    s.runtime_p90_ms = optional_field<double>(r, "runtime_p90_ms");
    s.baseline_ms = optional_field<double>(r, "baseline_ms");
    s.baseline_mean_ms = optional_field<double>(r, "baseline_mean_ms");
    s.runtime_trials = optional_field<std::int64_t>(r, "runtime_trials");
    s.custom_kernel_share = optional_field<double>(r, "custom_kernel_share");
    s.compile_path = optional_field<std::string>(r, "compile_path");
    s.device = optional_field<std::string>(r, "device");
    s.error_class = optional_field<std::string>(r, "error_class");
    s.error_message = optional_field<std::string>(r, "error_message");
    // Written since run summary format 2; absent from older records.
    s.margin = optional_field<double>(r, "margin");
    s.memory_floor_ms = optional_field<double>(r, "memory_floor_ms");
    using Details = std::map<std::string, std::string>;
    const Details details = optional_field<Details>(r, "flag_details").value_or(Details{});
    for (const std::string& name : optional_field<std::vector<std::string>>(r, "flags").value_or(std::vector<std::string>{})) {
      const auto detail = details.find(name);
      s.flags.push_back({name, detail != details.end() ? detail->second : std::string()});
    }
    sort_flags(s.flags);
    s.problem_traits = optional_field<std::vector<std::string>>(r, "problem_traits");
    s.failed_stage = optional_field<std::string>(r, "failed_stage");
    // Written since kernel infilling; absent from older records.
    s.infill_exact_match = optional_field<bool>(r, "infill_exact_match");
    s.infill_edit_distance = optional_field<std::int64_t>(r, "infill_edit_distance");
    return s;
  } catch (const nlohmann::json::exception& e) {
    return make_error(fmt::format("{}: malformed sample record ({})", where, e.what()));
  }
}

}  // namespace dicebench::results
