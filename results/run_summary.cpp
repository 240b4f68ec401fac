// Rendering a run's record, configuration and per-problem verdict counts for `dicebench show`.
#include "results/run_summary.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "results/store.hpp"
#include "results/text_table.hpp"

namespace dicebench::results {
namespace {

std::string or_dash(const std::optional<std::string>& value) { return value ? *value : std::string("\u2013"); }

// The configuration JSON pretty-printed and indented; the raw text if it does not parse.
std::string pretty_config(const std::string& text) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return "  " + text + "\n";
    std::string dumped = parsed.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out = "  ";
    for (char c : dumped) {
      out += c;
      if (c == '\n') out += "  ";
    }
    return out + "\n";
  } catch (const std::exception&) {
    return "  " + text + "\n";
  }
}

struct ProblemCounts {
  std::int64_t samples = 0;
  std::int64_t pending = 0;
  std::map<std::string, std::int64_t> verdicts;
};

std::string verdict_summary(const ProblemCounts& counts) {
  std::vector<std::string> parts;
  for (Verdict verdict : kAllVerdicts) {
    const auto it = counts.verdicts.find(std::string(verdict_name(verdict)));
    if (it != counts.verdicts.end()) parts.push_back(fmt::format("{} {}", it->first, it->second));
  }
  for (const auto& [name, count] : counts.verdicts) {
    if (!parse_verdict(name)) parts.push_back(fmt::format("{} {}", name, count));
  }
  if (counts.pending > 0) parts.push_back(fmt::format("pending {}", counts.pending));
  if (parts.empty()) return "\u2013";
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : ", ") + part;
  return joined;
}

}  // namespace

Result<std::string> format_run_summary(Store& store, std::int64_t run_id) {
  auto run = store.run(run_id);
  if (!run.ok()) return run.error();
  auto problems = store.problems(run_id);
  if (!problems.ok()) return problems.error();

  constexpr std::string_view context = "cannot read results";
  auto stmt = store.database().prepare(
      "SELECT s.problem_id, CASE WHEN e.sample IS NOT NULL THEN e.status "
      "WHEN s.candidate IS NULL THEN 'extraction_failed' ELSE NULL END, count(*) "
      "FROM samples AS s LEFT JOIN evaluations AS e ON e.sample = s.id "
      "WHERE s.run = ? GROUP BY 1, 2",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run_id);
  std::map<std::int64_t, ProblemCounts> counts;
  std::int64_t total_samples = 0;
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    ProblemCounts& problem = counts[stmt->column_int64(0)];
    const std::int64_t count = stmt->column_int64(2);
    problem.samples += count;
    total_samples += count;
    if (stmt->is_null(1)) {
      problem.pending += count;
    } else {
      problem.verdicts[stmt->column_text(1)] += count;
    }
  }

  const RunRow& r = *run;
  std::string out;
  out += fmt::format("run {}: {} on {}, {}\n", r.id, r.model, r.suite, run_status_name(r.status));
  out += fmt::format("  created    {}\n", r.created);
  out += fmt::format("  finished   {}\n", or_dash(r.finished));
  out += fmt::format("  dicebench  {} (git {})\n", r.dicebench_version, r.git_sha);
  out += fmt::format("  host       {}\n", r.host);
  out += fmt::format("  gpu        {} (driver {}, CUDA {}, torch {})\n", or_dash(r.gpu), or_dash(r.driver_version),
                     or_dash(r.cuda_version), or_dash(r.torch_version));
  out += fmt::format("  seed       {}\n", r.seed);
  out += "config:\n";
  out += pretty_config(r.config_json);
  out += fmt::format("problems: {}, samples: {}\n", problems->size(), total_samples);

  TextTable table;
  table.header = {"id", "level", "name", "samples", "verdicts"};
  table.right_aligned = {true, true, false, true, false};
  for (const ProblemRow& problem : *problems) {
    const auto it = counts.find(problem.problem_id);
    const ProblemCounts none;
    const ProblemCounts& c = it != counts.end() ? it->second : none;
    table.rows.push_back({std::to_string(problem.problem_id), std::to_string(problem.level),
                          truncate_to_width(problem.name, 48),
                          std::to_string(c.samples), verdict_summary(c)});
  }
  out += render_text_table(table);
  return out;
}

}  // namespace dicebench::results
