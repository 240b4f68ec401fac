// Builds small runs for the comparison, gate, report and export tests: problems and samples with
// the verdict, speedup, timing spread, margin and flags each test plans, and problems' traits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace dicebench::results::testing {

struct PlannedSample {
  std::int64_t problem;
  int index = 0;
  std::optional<Verdict> verdict;  // none: a candidate not evaluated yet (pending)
  std::optional<double> speedup = std::nullopt;
  double spread = 0.05;  // runtime p10/p90 at median * (1 -+ spread)
  std::optional<double> margin = std::nullopt;
  std::vector<std::pair<EvaluationFlag, std::string>> flags = {};
  std::string details_json = "";                                 // replaces the evaluation's details when given
  bool compiled = true;                                          // for a verdict other than compile_failed and correct
  std::optional<std::string> error_message = std::nullopt;       // default for an incorrect one: "max abs diff 0.5"
  std::optional<std::string> compile_path = std::nullopt;        // replaces the evaluation's when given
  std::optional<std::string> extraction_details = std::nullopt;  // the sample's (kernel infilling's fields)
};

// A run of `suite` over problems 1..n_problems (level = (id - 1) / 10 + 1 unless given), one
// evaluation per planned sample; runtime median 1 / speedup ms against a 1 ms baseline.
inline std::int64_t planned_run(Store& store, const std::vector<PlannedSample>& plan,
                                const std::vector<ProblemRow>& problems, const std::string& suite = "kernelbench-l1") {
  NewRun run_record = sample_run();
  run_record.suite = suite;
  const auto run = require_ok(store.create_run(run_record));
  require_ok(store.add_problems(run, problems));
  for (const PlannedSample& p : plan) {
    const bool has_code = !(p.verdict && *p.verdict == Verdict::extraction_failed);
    int level = 1;  // the planned problem's, by id
    for (auto it = problems.rbegin(); it != problems.rend(); ++it)
      if (it->problem_id == p.problem) level = it->level;
    NewSample new_row = new_sample(run, p.problem, p.index, has_code, level);
    new_row.extraction_details_json = p.extraction_details;
    const auto sample = require_ok(store.insert_sample(new_row));
    if (!p.verdict || !has_code) continue;
    StoredEvaluation e;
    e.sample = sample;
    e.status = *p.verdict;
    e.correct = *p.verdict == Verdict::correct;
    e.compiled = *p.verdict != Verdict::compile_failed && (p.compiled || e.correct);
    e.device = "cuda:0";
    if (p.speedup) {
      e.speedup = p.speedup;
      e.baseline_ms = 1.0;
      e.baseline_mean_ms = 1.0;
      e.runtime_ms = 1.0 / *p.speedup;
      e.runtime_mean_ms = *e.runtime_ms;
      e.runtime_std_ms = *e.runtime_ms * p.spread / 2;
      e.runtime_min_ms = *e.runtime_ms * (1 - 2 * p.spread);
      e.runtime_max_ms = *e.runtime_ms * (1 + 2 * p.spread);
      e.runtime_p10_ms = *e.runtime_ms * (1 - p.spread);
      e.runtime_p90_ms = *e.runtime_ms * (1 + p.spread);
      e.runtime_trials = 100;
      e.custom_kernel_share = 0.75;
      e.compile_path = "nvrtc";
    }
    if (!e.correct) e.error_message = p.error_message.value_or("max abs diff 0.5");
    e.margin = p.margin;
    for (const auto& [flag, detail] : p.flags) e.flags.push_back({std::string(flag_name(flag)), detail});
    if (!p.details_json.empty()) {
      e.runtime_trials.reset();
      require_ok(read_details_json(p.details_json, e));
    }
    if (p.compile_path) e.compile_path = p.compile_path;
    require_ok(store.insert_evaluation(e));
  }
  require_ok(store.finish_run(run, RunStatus::finished));
  return run;
}

// Records problems' traits in a run: {problem id, JSON array of trait names}, at `level`.
inline void set_traits(Store& store, std::int64_t run, const std::vector<std::pair<std::int64_t, std::string>>& traits,
                       int level = 1) {
  for (const auto& [problem, json] : traits) require_ok(store.set_problem_traits(run, {level, problem}, json));
}

// Problems 1..n of one level.
inline std::vector<ProblemRow> level_problems(int n, int level = 1) {
  std::vector<ProblemRow> out;
  for (int i = 1; i <= n; ++i) out.push_back(problem(i, level, "P" + std::to_string(i)));
  return out;
}

// A dice-infill run: problem 1's middle exact (correct), problem 2's 9 bytes off (output_mismatch),
// problem 3 without infill details (correct).
inline std::int64_t planned_infill_run(Store& store) {
  return planned_run(store,
                     {{.problem = 1,
                       .verdict = Verdict::correct,
                       .speedup = 1.5,
                       .extraction_details = R"({"infill_exact_match": true, "infill_edit_distance": 0})"},
                      {.problem = 2,
                       .verdict = Verdict::output_mismatch,
                       .extraction_details = R"({"infill_exact_match": false, "infill_edit_distance": 9})"},
                      {.problem = 3, .verdict = Verdict::correct, .speedup = 1.0}},
                     level_problems(3), "dice-infill");
}

}  // namespace dicebench::results::testing
