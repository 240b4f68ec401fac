// Everything the comparison, gate, export and HTML report need about one run, loaded in one
// pass: the problems it covers and one record per sample with its verdict, timings and (when
// asked for) the candidate source and compile log. Also read back from a run summary file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "results/store/rows.hpp"

namespace dicebench::results {

class Store;

// A flag on a sample's evaluation, with what the evaluator saw ("0.012 ms, floor 0.050 ms"). Kept
// by name, so a summary file from a newer dicebench still reads.
using SampleFlag = StoredFlag;

// One sample: where it stands, and its evaluation's stored fields (StoredEvaluation, generated from
// core/spec/evaluation.toml: status, timings, flags in the vocabulary's order, details; `sample` is
// samples.id, 0 when read from a summary file). A sample without candidate and without evaluation
// has status extraction_failed; a pending one has the defaults.
struct SampleResult : StoredEvaluation {
  std::int64_t problem_id = 0;
  int level = 0;
  int sample_index = 0;
  bool has_candidate = false;
  bool pending = false;  // a candidate without an evaluation yet
  // The problem's degenerate traits (core/spec/vocabulary.toml names); none when never checked. An
  // empty list: checked, and not degenerate.
  std::optional<std::vector<std::string>> problem_traits;
  // Why its request failed, for a sample without candidate whose model gave no completion because
  // the request failed (samples.gen_stats '$.error', stats::kError): a request failure rather than
  // the model writing no code. Absent otherwise, and in summary files.
  std::optional<std::string> request_error;
  // Kernel infilling, from the sample's extraction details (dicebench/extraction_details.hpp): the
  // answer's middle equals the reference middle, and its edit distance to it; absent for other suites
  // (and in databases before schema 8 and summary files).
  std::optional<bool> infill_exact_match;
  std::optional<std::int64_t> infill_edit_distance;
  // Only with LoadOptions::sources (compile_log too).
  std::optional<std::string> candidate;

  ProblemKey key() const { return {level, problem_id}; }
  // The verdict's name (evaluations.status); empty while pending.
  std::string verdict() const { return pending ? std::string() : std::string(verdict_name(status)); }
  bool has_flag(EvaluationFlag flag) const;
  const SampleFlag* find_flag(EvaluationFlag flag) const;
};

struct RunResults {
  RunRow run;
  std::vector<ProblemRow> problems;   // every problem the run covers, by level and problem id
  std::vector<SampleResult> samples;  // by level, problem id, then sample index
  // The runs this one was put together from (combine_level_runs, one per level); empty for a run.
  std::vector<RunRow> parts;
};

struct LoadOptions {
  bool sources = false;  // candidate sources and compile logs
};

// Errors: "no run N in FILE", a problem whose traits are not a JSON array of names, and the
// store's read errors. Works on databases of schema version 1 and later (columns and tables added
// later read as absent: no margin, no flags, traits not checked).
Result<RunResults> load_run_results(Store& store, std::int64_t run, LoadOptions options = {});

// The problem's record among run.problems, or nullptr.
const ProblemRow* find_problem(const RunResults& run, const ProblemKey& key);

// A problem's traits (ProblemRow::traits_json) as names: none when never checked. Errors, naming
// `where`, when the text is not a JSON array of strings.
Result<std::optional<std::vector<std::string>>> parse_problem_traits(const std::optional<std::string>& traits_json,
                                                                     const std::string& where);

// The traits as ProblemRow::traits_json stores them (a JSON array), or none.
std::optional<std::string> problem_traits_json(const std::optional<std::vector<std::string>>& traits);

// Degenerate: checked, with at least one trait (it can be passed without computing its answer).
bool is_degenerate(const std::optional<std::vector<std::string>>& traits);

}  // namespace dicebench::results
