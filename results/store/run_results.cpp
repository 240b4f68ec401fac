// Loading a run's problems and per-sample results (with their flags, margins and the problems'
// traits) from the store, on any schema version.
#include "results/store/run_results.hpp"
#include "results/store/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "results/store/store.hpp"

#include <dicebench/extraction_details.hpp>

namespace dicebench::results {
namespace {

// The infilling fields of a sample's extraction details (a JSON object the store has checked).
void read_extraction_details(const std::string& details, SampleResult& sample) {
  const nlohmann::json parsed = nlohmann::json::parse(details, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return;
  if (const auto it = parsed.find(extraction::kInfillExactMatch); it != parsed.end() && it->is_boolean())
    sample.infill_exact_match = it->get<bool>();
  if (const auto it = parsed.find(extraction::kInfillEditDistance); it != parsed.end() && it->is_number_integer())
    sample.infill_edit_distance = it->get<std::int64_t>();
}

}  // namespace

bool SampleResult::has_flag(EvaluationFlag flag) const { return find_flag(flag) != nullptr; }

const SampleFlag* SampleResult::find_flag(EvaluationFlag flag) const {
  for (const SampleFlag& f : flags)
    if (f.name == flag_name(flag)) return &f;
  return nullptr;
}

Result<std::optional<std::vector<std::string>>> parse_problem_traits(const std::optional<std::string>& traits_json,
                                                                     const std::string& where) {
  if (!traits_json) return std::optional<std::vector<std::string>>();
  const nlohmann::json parsed = nlohmann::json::parse(*traits_json, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> names;
  bool valid = parsed.is_array();
  if (valid) {
    for (const nlohmann::json& name : parsed) {
      if (!name.is_string()) {
        valid = false;
        break;
      }
      names.push_back(name.get<std::string>());
    }
  }
  if (!valid)
    return make_error(fmt::format("{}: traits must be a JSON array of trait names, not {}", where, *traits_json));
  return std::optional<std::vector<std::string>>(std::move(names));
}

std::optional<std::string> problem_traits_json(const std::optional<std::vector<std::string>>& traits) {
  if (!traits) return std::nullopt;
  return nlohmann::json(*traits).dump();
}

bool is_degenerate(const std::optional<std::vector<std::string>>& traits) { return traits && !traits->empty(); }

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
  std::map<ProblemKey, std::optional<std::vector<std::string>>> traits;
  for (const ProblemRow& problem : results.problems) {
    auto parsed = parse_problem_traits(problem.traits_json, fmt::format("{}: problem {} of run {}", store.path(),
                                                                        problem_key_text(problem.key()), run));
    if (!parsed.ok()) return parsed.error();
    traits[problem.key()] = std::move(*parsed);
  }
  auto flags = store.flags(run);
  if (!flags.ok()) return flags.error();

  const std::string sources = options.sources ? "s.candidate" : "NULL";
  const std::string sql = fmt::format(
      "SELECT s.id, s.problem_id, p.level, s.sample_index, s.candidate IS NOT NULL, e.sample IS NOT NULL, {}, "
      "CASE WHEN s.candidate IS NULL AND json_valid(s.gen_stats) THEN json_extract(s.gen_stats, '$.error') END, {}, {} "
      "FROM samples AS s JOIN problems AS p ON {} "
      "LEFT JOIN evaluations AS e ON e.sample = s.id WHERE s.run = ? ORDER BY p.level, s.problem_id, s.sample_index",
      sources, store.schema_version() >= 8 ? "s.extraction_details" : "NULL",
      evaluation_select_sql(store.schema_version(), "e"), sample_problem_join_sql(store.schema_version()));
  constexpr std::string_view context = "cannot read results";
  constexpr int kFirstEvaluationColumn = 9;
  auto stmt = store.database().prepare(sql, context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    SampleResult s;
    s.has_candidate = stmt->column_int64(4) != 0;
    const bool evaluated = stmt->column_int64(5) != 0;
    if (evaluated) {
      if (auto read = read_evaluation(*stmt, kFirstEvaluationColumn, s); !read)
        return make_error(fmt::format("{}: {}", store.path(), read.error().message));
      if (!options.sources) s.compile_log.reset();
      if (const auto it = flags->find(s.sample); it != flags->end()) s.flags = it->second;
    } else if (s.has_candidate) {
      s.pending = true;
    } else {
      s.status = Verdict::extraction_failed;
    }
    s.sample = stmt->column_int64(0);
    s.problem_id = stmt->column_int64(1);
    s.level = static_cast<int>(stmt->column_int64(2));
    s.sample_index = static_cast<int>(stmt->column_int64(3));
    s.candidate = stmt->column_optional_text(6);
    s.request_error = stmt->column_optional_text(7);
    if (const auto details = stmt->column_optional_text(8)) read_extraction_details(*details, s);
    if (const auto it = traits.find(s.key()); it != traits.end()) s.problem_traits = it->second;
    results.samples.push_back(std::move(s));
  }
  return results;
}

const ProblemRow* find_problem(const RunResults& run, const ProblemKey& key) {
  for (const ProblemRow& problem : run.problems)
    if (problem.key() == key) return &problem;
  return nullptr;
}

}  // namespace dicebench::results
