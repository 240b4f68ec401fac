// Rendering a run's results as KernelBench's eval_results.json, JSON lines and CSV.
#include "results/report/export.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "results/report/query_format.hpp"
#include "results/report/sample_record.hpp"

namespace dicebench::results {
namespace {

constexpr auto kDumpErrors = nlohmann::json::error_handler_t::replace;

nlohmann::ordered_json kernelbench_metadata(const RunResults& run, const SampleResult& s) {
  nlohmann::ordered_json metadata;
  metadata["hardware"] = run.run.gpu.value_or(s.device.empty() ? std::string("cpu") : s.device);
  metadata["device"] = s.device;
  // KernelBench's own keys for what went wrong, by the kind of failure: anything while loading is
  // a compilation error, a failure of a loaded candidate a runtime error, a wrong output a
  // correctness issue.
  if (!s.correct && !s.pending && s.status != Verdict::extraction_failed) {
    const Verdict verdict = s.status;
    const char* key = !kernelbench_compiled(s) ? "compilation_error"
                      : verdict == Verdict::runtime_error || verdict == Verdict::crashed || verdict == Verdict::timeout
                          ? "runtime_error"
                          : "correctness_issue";
    metadata[key] = s.error_message.value_or(s.verdict());
  }
  if (s.has_flag(EvaluationFlag::excessive_speedup)) metadata["excessive_speedup"] = true;  // KernelBench's key
  metadata["dicebench_verdict"] = s.verdict();
  if (s.speedup) metadata["dicebench_speedup"] = *s.speedup;
  if (s.failed_stage) metadata["dicebench_failed_stage"] = *s.failed_stage;
  if (s.margin) metadata["dicebench_margin"] = *s.margin;
  if (!s.flags.empty()) {
    nlohmann::ordered_json flags = nlohmann::ordered_json::object();
    for (const SampleFlag& flag : s.flags) flags[flag.name] = flag.detail;
    metadata["dicebench_flags"] = std::move(flags);
  }
  if (s.problem_traits) metadata["dicebench_problem_traits"] = *s.problem_traits;
  return metadata;
}

// Words of the evaluator's older load failures (before failed_stage was recorded) that name a
// candidate without a usable ModelNew (harness loading.find_model_class).
constexpr std::string_view kModelNewMissing[] = {"defines no class ModelNew", "ModelNew in the candidate is"};

Cell csv_cell(const nlohmann::ordered_json& value) {
  if (value.is_null()) return std::monostate{};
  if (value.is_boolean()) return static_cast<std::int64_t>(value.get<bool>() ? 1 : 0);
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, kDumpErrors);
}

}  // namespace

bool failed_while_loading(const SampleResult& s) {
  if (s.pending || s.correct) return false;
  if (!s.compiled) return true;
  if (s.failed_stage) return *s.failed_stage == "load";
  const std::string message = s.error_message.value_or("");
  for (std::string_view words : kModelNewMissing)
    if (message.find(words) != std::string::npos) return true;
  return false;
}

bool kernelbench_compiled(const SampleResult& s) { return s.compiled && !failed_while_loading(s); }

Result<std::string> export_kernelbench(const RunResults& run, std::optional<int> level) {
  std::set<int> levels;
  for (const ProblemRow& problem : run.problems) levels.insert(problem.level);
  std::vector<std::string> names;
  for (const int l : levels) names.push_back(std::to_string(l));
  if (level && !levels.count(*level))
    return make_error(
        fmt::format("run {} has no level {} (it covers level {})", run.run.id, *level, fmt::join(names, ", ")));
  if (!level && levels.size() > 1) {
    return make_error(
        fmt::format("run {} covers {} levels ({}); KernelBench's eval_results.json holds one level: "
                    "pass --level with one of them",
                    run.run.id, levels.size(), fmt::join(names, ", ")));
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const SampleResult& s : run.samples) {  // already by level, problem id, then sample index
    if (s.pending || (level && s.level != *level)) continue;
    nlohmann::ordered_json entry;
    entry["sample_id"] = s.sample_index;
    entry["compiled"] = kernelbench_compiled(s);
    entry["correctness"] = s.correct;
    entry["metadata"] = kernelbench_metadata(run, s);
    const std::optional<double> mean = s.runtime_mean_ms ? s.runtime_mean_ms : s.runtime_ms;
    entry["runtime"] = mean.value_or(-1.0);
    nlohmann::ordered_json stats = nlohmann::ordered_json::object();
    if (mean) {
      stats["mean"] = *mean;
      stats["std"] = s.runtime_std_ms.value_or(0.0);
      stats["min"] = s.runtime_min_ms.value_or(*mean);
      stats["max"] = s.runtime_max_ms.value_or(*mean);
      if (s.runtime_trials) stats["num_trials"] = *s.runtime_trials;
      stats["hardware"] = entry["metadata"]["hardware"];
      stats["device"] = s.device;
    }
    entry["runtime_stats"] = std::move(stats);
    out[std::to_string(s.problem_id)].push_back(std::move(entry));
  }
  return out.dump(4, ' ', false, kDumpErrors) + "\n";
}

std::string export_jsonl(const RunResults& run) {
  std::string out;
  for (const SampleResult& s : run.samples) out += sample_record(run, s).dump(-1, ' ', false, kDumpErrors) + "\n";
  return out;
}

std::string export_csv(const RunResults& run) {
  QueryResult table;
  const nlohmann::ordered_json header = sample_record(run, SampleResult{});
  for (const auto& [key, value] : header.items()) table.columns.push_back(key);
  for (const SampleResult& s : run.samples) {
    const nlohmann::ordered_json record = sample_record(run, s);
    std::vector<Cell> row;
    for (const auto& [key, value] : record.items()) row.push_back(csv_cell(value));
    table.rows.push_back(std::move(row));
  }
  return format_csv(table);
}

}  // namespace dicebench::results
