// Terminal table and JSON rendering of a run's report: the metrics table, verdict and flag counts,
// and the figures with and without degenerate problems.
#include "results/report/report_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "results/report/text_table.hpp"

namespace dicebench::results {
namespace {

constexpr std::string_view kNoData = "\u2013";

std::string percent(std::optional<double> rate) {
  return rate ? fmt::format("{:.1f}%", *rate * 100.0) : std::string(kNoData);
}

std::string threshold_name(double p) { return fmt::format("{}", p); }

std::string verdict_line(const LevelReport& total) {
  std::string line = "verdicts:";
  bool first = true;
  // In the fixed order of the vocabulary, skipping zeros.
  for (Verdict verdict : kAllVerdicts) {
    const auto it = total.verdicts.find(std::string(verdict_name(verdict)));
    if (it == total.verdicts.end() || it->second == 0) continue;
    line += fmt::format("{} {} {}", first ? "" : ",", verdict_name(verdict), it->second);
    first = false;
  }
  for (const auto& [name, count] : total.verdicts) {
    if (parse_verdict(name)) continue;  // unknown names (newer writers) still show
    line += fmt::format("{} {} {}", first ? "" : ",", name, count);
    first = false;
  }
  if (total.pending > 0) {
    line += fmt::format("{} pending {}", first ? "" : ",", total.pending);
    first = false;
  }
  if (first) line += " none";
  return line;
}

// "flags: below_memory_floor 1, borderline 2": flags in the vocabulary's order, then unknown names.
std::string flag_line(const LevelReport& total) {
  std::vector<std::string> parts;
  for (EvaluationFlag flag : kAllEvaluationFlags) {
    const auto it = total.flags.find(std::string(flag_name(flag)));
    if (it != total.flags.end()) parts.push_back(fmt::format("{} {}", it->first, it->second));
  }
  for (const auto& [name, count] : total.flags)
    if (!parse_flag(name)) parts.push_back(fmt::format("{} {}", name, count));
  std::string line = "flags:";
  for (std::size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? " " : ", ") + parts[i];
  return parts.empty() ? line + " none" : line;
}

// "degenerate problems: 2 of 5 (zeros_pass 2, constant_output 1); traits not checked for 1"
std::string degenerate_line(const LevelReport& total) {
  if (total.problems > 0 && total.unchecked_problems == total.problems)
    return "degenerate problems: traits not checked";
  std::string line = total.degenerate_problems == 0
                         ? fmt::format("degenerate problems: none of {}", total.problems)
                         : fmt::format("degenerate problems: {} of {}", total.degenerate_problems, total.problems);
  std::vector<std::string> parts;
  for (ProblemTrait trait : kAllProblemTraits) {
    const auto it = total.traits.find(std::string(trait_name(trait)));
    if (it != total.traits.end()) parts.push_back(fmt::format("{} {}", it->first, it->second));
  }
  for (const auto& [name, count] : total.traits)
    if (!parse_trait(name)) parts.push_back(fmt::format("{} {}", name, count));
  if (!parts.empty()) {
    line += " (";
    for (std::size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? "" : ", ") + parts[i];
    line += ")";
  }
  if (total.unchecked_problems > 0) line += fmt::format("; traits not checked for {}", total.unchecked_problems);
  return line;
}

// Correct %, fast_1 and geomean over all problems and over the non-degenerate ones, per level
// and in total.
std::string degenerate_table(const RunReport& report) {
  TextTable table;
  table.header = {"level", "problems", "count", "correct", "fast_1", "geomean"};
  table.right_aligned = {false, false, true, true, true, true};
  auto add = [&](const LevelReport& level) {
    const std::string name = level.level ? std::to_string(*level.level) : std::string("total");
    for (const auto& [set, figures] :
         {std::pair<const char*, const HeadlineFigures*>{"all", &level.all_problems},
          std::pair<const char*, const HeadlineFigures*>{"non-degenerate", &level.non_degenerate}}) {
      table.rows.push_back(
          {name, set, std::to_string(figures->problems), percent(figures->correct_rate), percent(figures->fast_1),
           figures->geomean_speedup ? fmt::format("{:.3f}x", *figures->geomean_speedup) : std::string(kNoData)});
    }
  };
  if (report.levels.size() > 1) {
    for (const LevelReport& level : report.levels) add(level);
  }
  add(report.total);
  return render_text_table(table);
}

nlohmann::json optional_number(std::optional<double> value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json optional_text(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json headline_json(const HeadlineFigures& figures) {
  return {{"problems", figures.problems},
          {"decided", figures.decided},
          {"correct", figures.correct},
          {"correct_rate", optional_number(figures.correct_rate)},
          {"fast_1", optional_number(figures.fast_1)},
          {"geomean_speedup", optional_number(figures.geomean_speedup)}};
}

nlohmann::json level_json(const LevelReport& level) {
  nlohmann::json out;
  out["level"] = level.level ? nlohmann::json(*level.level) : nlohmann::json(nullptr);
  out["problems"] = level.problems;
  out["samples"] = level.samples;
  out["pending"] = level.pending;
  out["decided"] = level.decided;
  out["compiled"] = level.compiled;
  out["correct"] = level.correct;
  out["compiled_rate"] = optional_number(level.compiled_rate);
  out["correct_rate"] = optional_number(level.correct_rate);
  nlohmann::json fast = nlohmann::json::object();
  for (const FastP& entry : level.fast_p) fast[threshold_name(entry.p)] = optional_number(entry.value);
  out["fast_p"] = std::move(fast);
  out["geomean_speedup"] = optional_number(level.geomean_speedup);
  out["speedup_samples"] = level.speedup_samples;
  out["min_decided_per_problem"] = level.min_decided_per_problem;
  nlohmann::json pass = nlohmann::json::object();
  for (const PassAtK& entry : level.pass_at_k) pass[std::to_string(entry.k)] = entry.value;
  out["pass_at_k"] = std::move(pass);
  out["verdicts"] = level.verdicts;
  out["request_failures"] = level.request_failures;
  out["excludes_degenerate"] = level.excludes_degenerate;
  out["flags"] = level.flags;
  out["degenerate_problems"] = level.degenerate_problems;
  out["unchecked_problems"] = level.unchecked_problems;
  out["traits"] = level.traits;
  out["all_problems"] = headline_json(level.all_problems);
  out["non_degenerate"] = headline_json(level.non_degenerate);
  if (level.infill_samples > 0)
    out["infill"] = {{"samples", level.infill_samples},
                     {"exact_match", level.infill_exact},
                     {"exact_match_rate", optional_number(level.infill_exact_rate)},
                     {"mean_edit_distance", optional_number(level.infill_mean_edit_distance)}};
  return out;
}

// "run 3", or "runs 3, 4, 5" for single-level runs put together.
std::string run_names(const RunReport& report) {
  if (report.parts.empty()) return fmt::format("run {}", report.run.id);
  std::vector<std::string> ids;
  for (const RunRow& part : report.parts) ids.push_back(std::to_string(part.id));
  return "runs " + fmt::format("{}", fmt::join(ids, ", "));
}

// The kernel language the suite asked for (its prompts' backend, as the run's config records it:
// "suite": {"backend": ...}); "" when the suite records none.
std::string run_backend(const RunRow& run) {
  const auto config = nlohmann::json::parse(run.config_json, nullptr, false);
  if (!config.is_object()) return "";
  const auto suite = config.find("suite");
  if (suite == config.end() || !suite->is_object()) return "";
  const auto backend = suite->find("backend");
  return backend != suite->end() && backend->is_string() ? backend->get<std::string>() : "";
}

}  // namespace

std::string format_report(const RunReport& report) {
  const RunRow& run = report.run;
  const std::string backend = run_backend(run);
  std::string out =
      fmt::format("{}  model {}  suite {}{}  status {}  created {}", run_names(report), run.model, run.suite,
                  backend.empty() ? "" : "  backend " + backend, run_status_name(run.status), run.created);
  if (run.finished) out += fmt::format("  finished {}", *run.finished);
  out += '\n';
  if (report.options.exclude_degenerate) {
    out += fmt::format("fast_p and geomean leave out the {} degenerate problem{} (--exclude-degenerate)\n",
                       report.total.degenerate_problems, report.total.degenerate_problems == 1 ? "" : "s");
  }

  // pass@k columns: every k that any row has.
  std::set<int> ks;
  for (const LevelReport& level : report.levels) {
    for (const PassAtK& entry : level.pass_at_k) ks.insert(entry.k);
  }
  for (const PassAtK& entry : report.total.pass_at_k) ks.insert(entry.k);

  TextTable table;
  table.header = {"level", "problems", "samples", "pending", "compiled", "correct"};
  for (double p : kFastPThresholds) table.header.push_back("fast_" + threshold_name(p));
  table.header.push_back("geomean");
  for (int k : ks) table.header.push_back(fmt::format("pass@{}", k));
  table.right_aligned.assign(table.header.size(), true);
  table.right_aligned[0] = false;

  auto add_row = [&](const LevelReport& level) {
    std::vector<std::string> row;
    row.push_back(level.level ? std::to_string(*level.level) : std::string("total"));
    row.push_back(std::to_string(level.problems));
    row.push_back(std::to_string(level.samples));
    row.push_back(std::to_string(level.pending));
    row.push_back(percent(level.compiled_rate));
    row.push_back(percent(level.correct_rate));
    for (const FastP& entry : level.fast_p) row.push_back(percent(entry.value));
    row.push_back(level.geomean_speedup ? fmt::format("{:.3f}x", *level.geomean_speedup) : std::string(kNoData));
    for (int k : ks) {
      std::optional<double> value;
      for (const PassAtK& entry : level.pass_at_k) {
        if (entry.k == k) value = entry.value;
      }
      row.push_back(percent(value));
    }
    table.rows.push_back(std::move(row));
  };
  for (const LevelReport& level : report.levels) add_row(level);
  add_row(report.total);
  out += render_text_table(table);
  out += verdict_line(report.total);
  out += '\n';
  if (report.total.request_failures > 0) {
    const auto failed = report.total.verdicts.find(std::string(verdict_name(Verdict::extraction_failed)));
    out += fmt::format(
        "request failures: {} of the {} extraction_failed samples got no completion, as their request "
        "failed (samples.gen_stats '$.error' says why), rather than a completion without code\n",
        report.total.request_failures, failed != report.total.verdicts.end() ? failed->second : 0);
  }
  if (report.total.infill_samples > 0)
    out += fmt::format(
        "infill: middle exact match {} of {} samples ({}), mean edit distance {:.1f} bytes "
        "(samples.extraction_details)\n",
        report.total.infill_exact, report.total.infill_samples, percent(report.total.infill_exact_rate),
        *report.total.infill_mean_edit_distance);
  out += flag_line(report.total);
  out += '\n';
  out += degenerate_line(report.total);
  out += '\n';
  if (report.total.degenerate_problems > 0) out += degenerate_table(report);
  return out;
}

nlohmann::json report_json(const RunReport& report) {
  const RunRow& run = report.run;
  nlohmann::json out;
  out["run"] = {
      {"id", run.id},
      {"model", run.model},
      {"suite", run.suite},
      {"backend", run_backend(run)},
      {"status", std::string(run_status_name(run.status))},
      {"created", run.created},
      {"finished", optional_text(run.finished)},
      {"dicebench_version", run.dicebench_version},
      {"git_sha", run.git_sha},
      {"gpu", optional_text(run.gpu)},
  };
  if (!report.parts.empty()) {
    nlohmann::json parts = nlohmann::json::array();
    for (const RunRow& part : report.parts) parts.push_back({{"id", part.id}, {"suite", part.suite}});
    out["runs"] = std::move(parts);
  }
  out["exclude_degenerate"] = report.options.exclude_degenerate;
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelReport& level : report.levels) levels.push_back(level_json(level));
  out["levels"] = std::move(levels);
  out["total"] = level_json(report.total);
  return out;
}

}  // namespace dicebench::results
