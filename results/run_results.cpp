// Loading a run's problems and per-sample results from the store in one query.
#include "results/run_results.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "results/store.hpp"

namespace dicebench::results {
namespace {

// The number stored under `key` in an evaluation's details JSON, if any.
std::optional<std::int64_t> details_integer(const std::string& details, const char* key) {
  const nlohmann::json parsed = nlohmann::json::parse(details, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return std::nullopt;
  const auto it = parsed.find(key);
  if (it == parsed.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

Result<RunResults> load_run_results(Store& store, std::int64_t run, LoadOptions options) {
  RunResults results;
  {
    auto row = store.run(run);
    if (!row.ok()) return row.error();
    results.run = std::move(*row);
    auto problems = store.problems(run);
    if (!problems.ok()) return problems.error();
    results.problems = std::move(*problems);
  }
  const bool v4 = store.schema_version() >= 4;
  const std::string sources = options.sources ? "s.candidate" : "NULL";
  const std::string sql = fmt::format(
      "SELECT s.id, s.problem_id, p.level, s.sample_index, s.candidate IS NOT NULL, e.sample IS NOT NULL, e.status, "
      "e.compiled, e.correct, e.device, e.runtime_ms, e.runtime_mean_ms, e.runtime_std_ms, e.runtime_min_ms, "
      "e.runtime_max_ms, e.runtime_p10_ms, e.runtime_p90_ms, e.baseline_ms, e.baseline_mean_ms, e.speedup, "
      "e.error_class, e.error_message, e.details, {}, {}, {}, {} "
      "FROM samples AS s JOIN problems AS p ON p.run = s.run AND p.problem_id = s.problem_id "
      "LEFT JOIN evaluations AS e ON e.sample = s.id WHERE s.run = ? ORDER BY s.problem_id, s.sample_index",
      v4 ? "e.custom_kernel_share" : "NULL", v4 ? "e.compile_path" : "NULL", sources,
      v4 && options.sources ? "e.compile_log" : "NULL");
  constexpr std::string_view context = "cannot read results";
  auto stmt = store.database().prepare(sql, context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    SampleResult s;
    s.sample_id = stmt->column_int64(0);
    s.problem_id = stmt->column_int64(1);
    s.level = static_cast<int>(stmt->column_int64(2));
    s.sample_index = static_cast<int>(stmt->column_int64(3));
    s.has_candidate = stmt->column_int64(4) != 0;
    const bool evaluated = stmt->column_int64(5) != 0;
    if (evaluated) {
      s.verdict = stmt->column_text(6);
      s.compiled = stmt->column_int64(7) != 0;
      s.correct = stmt->column_int64(8) != 0;
      s.device = stmt->column_optional_text(9);
      s.runtime_ms = stmt->column_optional_double(10);
      s.runtime_mean_ms = stmt->column_optional_double(11);
      s.runtime_std_ms = stmt->column_optional_double(12);
      s.runtime_min_ms = stmt->column_optional_double(13);
      s.runtime_max_ms = stmt->column_optional_double(14);
      s.runtime_p10_ms = stmt->column_optional_double(15);
      s.runtime_p90_ms = stmt->column_optional_double(16);
      s.baseline_ms = stmt->column_optional_double(17);
      s.baseline_mean_ms = stmt->column_optional_double(18);
      s.speedup = stmt->column_optional_double(19);
      s.error_class = stmt->column_optional_text(20);
      s.error_message = stmt->column_optional_text(21);
      s.runtime_trials = details_integer(stmt->column_text(22), "runtime_trials");
      s.custom_kernel_share = stmt->column_optional_double(23);
      s.compile_path = stmt->column_optional_text(24);
      s.compile_log = stmt->column_optional_text(26);
    } else if (s.has_candidate) {
      s.pending = true;
    } else {
      s.verdict = std::string(verdict_name(Verdict::extraction_failed));
    }
    s.candidate = stmt->column_optional_text(25);
    results.samples.push_back(std::move(s));
  }
  return results;
}

const ProblemRow* find_problem(const RunResults& run, std::int64_t problem_id) {
  for (const ProblemRow& problem : run.problems)
    if (problem.problem_id == problem_id) return &problem;
  return nullptr;
}

}  // namespace dicebench::results
