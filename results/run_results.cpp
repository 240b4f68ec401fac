// Loading a run's problems and per-sample results (with their flags, margins and the problems'
// traits) from the store, on any schema version.
#include "results/run_results.hpp"
#include "results/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "results/store.hpp"

#include <dicebench/extraction_details.hpp>

namespace dicebench::results {
namespace {

// What run_results reads from an evaluation's details JSON.
struct DetailsFacts {
  std::optional<std::int64_t> runtime_trials;
  std::optional<std::string> failed_stage;
};

DetailsFacts read_details(const std::string& details) {
  DetailsFacts facts;
  const nlohmann::json parsed = nlohmann::json::parse(details, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return facts;
  if (const auto it = parsed.find("runtime_trials"); it != parsed.end() && it->is_number_integer()) {
    facts.runtime_trials = it->get<std::int64_t>();
  }
  if (const auto it = parsed.find("failed_stage"); it != parsed.end() && it->is_string() && !it->get<std::string>().empty()) {
    facts.failed_stage = it->get<std::string>();
  }
  return facts;
}

// The infilling fields of a sample's extraction details (a JSON object the store has checked).
void read_extraction_details(const std::string& details, SampleResult& sample) {
  const nlohmann::json parsed = nlohmann::json::parse(details, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return;
  if (const auto it = parsed.find(extraction::kInfillExactMatch); it != parsed.end() && it->is_boolean())
    sample.infill_exact_match = it->get<bool>();
  if (const auto it = parsed.find(extraction::kInfillEditDistance); it != parsed.end() && it->is_number_integer())
    sample.infill_edit_distance = it->get<std::int64_t>();
}

// Where an evaluation flag stands in the vocabulary; unknown names after every known one.
std::size_t flag_rank(const std::string& name) {
  const auto flag = parse_flag(name);
  if (!flag) return kAllEvaluationFlags.size();
  return static_cast<std::size_t>(std::find(kAllEvaluationFlags.begin(), kAllEvaluationFlags.end(), *flag) -
                                  kAllEvaluationFlags.begin());
}

// The flags of every evaluated sample of the run, by sample id (schema 6 and later).
Result<std::map<std::int64_t, std::vector<SampleFlag>>> load_flags(Store& store, std::int64_t run) {
  std::map<std::int64_t, std::vector<SampleFlag>> out;
  if (store.schema_version() < 6) return out;
  constexpr std::string_view context = "cannot read evaluation flags";
  auto stmt = store.database().prepare(
      "SELECT f.sample, f.flag, f.detail FROM evaluation_flags AS f JOIN samples AS s ON s.id = f.sample "
      "WHERE s.run = ?",
      context);
  if (!stmt.ok()) return stmt.error();
  stmt->bind(1, run);
  for (;;) {
    auto row = stmt->step(context);
    if (!row.ok()) return row.error();
    if (!*row) break;
    out[stmt->column_int64(0)].push_back({stmt->column_text(1), stmt->column_text(2)});
  }
  for (auto& [sample, flags] : out) sort_flags(flags);
  return out;
}

}  // namespace

bool SampleResult::has_flag(EvaluationFlag flag) const { return find_flag(flag) != nullptr; }

const SampleFlag* SampleResult::find_flag(EvaluationFlag flag) const {
  for (const SampleFlag& f : flags)
    if (f.name == flag_name(flag)) return &f;
  return nullptr;
}

void sort_flags(std::vector<SampleFlag>& flags) {
  std::sort(flags.begin(), flags.end(), [](const SampleFlag& a, const SampleFlag& b) {
    const std::size_t ra = flag_rank(a.name), rb = flag_rank(b.name);
    return ra != rb ? ra < rb : a.name < b.name;
  });
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
  if (!valid) return make_error(fmt::format("{}: traits must be a JSON array of trait names, not {}", where, *traits_json));
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
  auto flags = load_flags(store, run);
  if (!flags.ok()) return flags.error();

  const bool v4 = store.schema_version() >= 4;
  const bool v6 = store.schema_version() >= 6;
  const std::string sources = options.sources ? "s.candidate" : "NULL";
  const std::string sql = fmt::format(
      "SELECT s.id, s.problem_id, p.level, s.sample_index, s.candidate IS NOT NULL, e.sample IS NOT NULL, e.status, "
      "e.compiled, e.correct, e.device, e.runtime_ms, e.runtime_mean_ms, e.runtime_std_ms, e.runtime_min_ms, "
      "e.runtime_max_ms, e.runtime_p10_ms, e.runtime_p90_ms, e.baseline_ms, e.baseline_mean_ms, e.speedup, "
      "e.error_class, e.error_message, e.details, {}, {}, {}, {}, {}, {}, "
      "CASE WHEN s.candidate IS NULL AND json_valid(s.gen_stats) THEN json_extract(s.gen_stats, '$.error') END, {} "
      "FROM samples AS s JOIN problems AS p ON {} "
      "LEFT JOIN evaluations AS e ON e.sample = s.id WHERE s.run = ? ORDER BY p.level, s.problem_id, s.sample_index",
      v4 ? "e.custom_kernel_share" : "NULL", v4 ? "e.compile_path" : "NULL", sources,
      v4 && options.sources ? "e.compile_log" : "NULL", v6 ? "e.margin" : "NULL", v6 ? "e.memory_floor_ms" : "NULL",
      store.schema_version() >= 8 ? "s.extraction_details" : "NULL", sample_problem_join_sql(store.schema_version()));
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
      const DetailsFacts details = read_details(stmt->column_text(22));
      s.runtime_trials = details.runtime_trials;
      s.failed_stage = details.failed_stage;
      s.custom_kernel_share = stmt->column_optional_double(23);
      s.compile_path = stmt->column_optional_text(24);
      s.compile_log = stmt->column_optional_text(26);
      s.margin = stmt->column_optional_double(27);
      s.memory_floor_ms = stmt->column_optional_double(28);
      if (const auto it = flags->find(s.sample_id); it != flags->end()) s.flags = it->second;
    } else if (s.has_candidate) {
      s.pending = true;
    } else {
      s.verdict = std::string(verdict_name(Verdict::extraction_failed));
    }
    s.candidate = stmt->column_optional_text(25);
    s.request_error = stmt->column_optional_text(29);
    if (const auto details = stmt->column_optional_text(30)) read_extraction_details(*details, s);
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
