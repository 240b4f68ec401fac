// Terminal table and JSON rendering of a run's report.
#include "results/report_format.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "results/text_table.hpp"

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

nlohmann::json optional_number(std::optional<double> value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json optional_text(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
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
  return out;
}

}  // namespace

std::string format_report(const RunReport& report) {
  const RunRow& run = report.run;
  std::string out = fmt::format("run {}  model {}  suite {}  status {}  created {}", run.id, run.model, run.suite,
                                run_status_name(run.status), run.created);
  if (run.finished) out += fmt::format("  finished {}", *run.finished);
  out += '\n';

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
  return out;
}

nlohmann::json report_json(const RunReport& report) {
  const RunRow& run = report.run;
  nlohmann::json out;
  out["run"] = {
      {"id", run.id},
      {"model", run.model},
      {"suite", run.suite},
      {"status", std::string(run_status_name(run.status))},
      {"created", run.created},
      {"finished", optional_text(run.finished)},
      {"dicebench_version", run.dicebench_version},
      {"git_sha", run.git_sha},
      {"gpu", optional_text(run.gpu)},
  };
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelReport& level : report.levels) levels.push_back(level_json(level));
  out["levels"] = std::move(levels);
  out["total"] = level_json(report.total);
  return out;
}

}  // namespace dicebench::results
