// Writing and reading run summary files.
#include "results/report/summary_file.hpp"
#include "core/base/whole_file.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "core/base/text.hpp"
#include "results/report/report.hpp"
#include "results/report/report_format.hpp"
#include "results/report/sample_record.hpp"
#include "results/store/json_fields.hpp"

namespace dicebench::results {
namespace {

nlohmann::ordered_json run_json(const RunRow& r) {
  nlohmann::ordered_json out;
  out["id"] = r.id;
  out["created"] = r.created;
  out["finished"] = or_null(r.finished);
  out["status"] = std::string(run_status_name(r.status));
  out["model"] = r.model;
  out["suite"] = r.suite;
  out["config"] = nlohmann::ordered_json::parse(r.config_json, nullptr, false);
  out["dicebench_version"] = r.dicebench_version;
  out["git_sha"] = r.git_sha;
  out["host"] = r.host;
  out["gpu"] = or_null(r.gpu);
  out["driver_version"] = or_null(r.driver_version);
  out["cuda_version"] = or_null(r.cuda_version);
  out["torch_version"] = or_null(r.torch_version);
  out["seed"] = r.seed;
  return out;
}

RunRow parse_run(const nlohmann::json& j) {
  RunRow r;
  r.id = j.at("id").get<std::int64_t>();
  r.created = j.at("created").get<std::string>();
  r.finished = optional_field<std::string>(j, "finished");
  r.status = parse_run_status(j.at("status").get<std::string>()).value_or(RunStatus::finished);
  r.model = j.at("model").get<std::string>();
  r.suite = j.at("suite").get<std::string>();
  r.config_json = j.contains("config") ? j.at("config").dump() : "{}";
  r.dicebench_version = j.at("dicebench_version").get<std::string>();
  r.git_sha = j.at("git_sha").get<std::string>();
  r.host = j.at("host").get<std::string>();
  r.gpu = optional_field<std::string>(j, "gpu");
  r.driver_version = optional_field<std::string>(j, "driver_version");
  r.cuda_version = optional_field<std::string>(j, "cuda_version");
  r.torch_version = optional_field<std::string>(j, "torch_version");
  r.seed = j.at("seed").get<std::int64_t>();
  r.repro_json = "{}";
  return r;
}

}  // namespace

std::string write_summary(const RunResults& run) {
  nlohmann::ordered_json out;
  out["format"] = kSummaryFormat;
  out["version"] = kSummaryFormatVersion;
  out["run"] = run_json(run.run);
  nlohmann::ordered_json problems = nlohmann::ordered_json::array();
  for (const ProblemRow& p : run.problems) {
    const auto traits = parse_problem_traits(p.traits_json, "");  // load_run_results checked them
    problems.push_back({{"problem_id", p.problem_id},
                        {"level", p.level},
                        {"name", p.name},
                        {"path", p.path},
                        {"content_hash", p.content_hash},
                        {"prompt_hash", p.prompt_hash},
                        {"traits", traits.ok() ? or_null(*traits) : nlohmann::ordered_json(nullptr)}});
  }
  out["problems"] = std::move(problems);
  nlohmann::ordered_json samples = nlohmann::ordered_json::array();
  for (const SampleResult& s : run.samples) samples.push_back(sample_record(run, s));
  out["samples"] = std::move(samples);
  out["report"] = report_json(compute_report(run));
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<RunResults> read_summary(const std::filesystem::path& path) {
  const std::string name = path.string();
  const auto text = read_whole_file(path, "run summary");
  if (!text) return text.error();
  const nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return make_error(fmt::format("{}: not JSON (expected a dicebench run summary)", name));
  if (!doc.is_object() || doc.value("format", "") != kSummaryFormat || !doc.contains("version") ||
      !doc["version"].is_number_integer()) {
    return make_error(
        fmt::format("{}: not a dicebench run summary (no \"format\": \"{}\" with a version)", name, kSummaryFormat));
  }
  const auto version = doc["version"].get<std::int64_t>();
  if (version > kSummaryFormatVersion) {
    return make_error(
        fmt::format("{} was written by a newer dicebench (run summary format {}, this build reads up to {})", name,
                    version, kSummaryFormatVersion));
  }
  if (version < 1) return make_error(fmt::format("{}: run summary format {} does not exist", name, version));
  RunResults run;
  std::map<ProblemKey, std::optional<std::vector<std::string>>> traits;
  try {
    run.run = parse_run(doc.at("run"));
    for (const auto& p : doc.at("problems")) {
      ProblemRow problem;
      problem.problem_id = p.at("problem_id").get<std::int64_t>();
      problem.level = p.at("level").get<int>();
      problem.name = p.at("name").get<std::string>();
      problem.path = p.value("path", "");
      problem.content_hash = p.value("content_hash", "");
      problem.prompt_hash = p.value("prompt_hash", "");
      // Since format 2: the problem's traits, null when never checked.
      traits[problem.key()] = optional_field<std::vector<std::string>>(p, "traits");
      problem.traits_json = problem_traits_json(traits[problem.key()]);
      run.problems.push_back(std::move(problem));
    }
  } catch (const nlohmann::json::exception& e) {
    return make_error(fmt::format("{}: malformed run summary ({})", name, e.what()));
  }
  const auto samples = doc.find("samples");
  if (samples == doc.end() || !samples->is_array())
    return make_error(fmt::format("{}: malformed run summary (no samples)", name));
  for (std::size_t i = 0; i < samples->size(); ++i) {
    auto sample = parse_sample_record((*samples)[i], fmt::format("{}: sample {}", name, i));
    if (!sample.ok()) return sample.error();
    // The problem's traits are the problems list's; a record's copy is for readers of JSON lines.
    const auto it = traits.find(sample->key());
    sample->problem_traits = it != traits.end() ? it->second : std::nullopt;
    run.samples.push_back(std::move(*sample));
  }
  return run;
}

}  // namespace dicebench::results
