// Everything the comparison, gate, export and HTML report need about one run, loaded in one
// pass: the problems it covers and one record per sample with its verdict, timings and (when
// asked for) the candidate source and compile log. Also read back from a run summary file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "results/rows.hpp"

namespace dicebench::results {

class Store;

struct SampleResult {
  std::int64_t sample_id = 0;  // samples.id; 0 when read from a summary file
  std::int64_t problem_id = 0;
  int level = 0;
  int sample_index = 0;
  bool has_candidate = false;
  bool pending = false;  // a candidate without an evaluation yet
  // evaluations.status; "extraction_failed" for a sample without candidate or evaluation;
  // empty while pending.
  std::string verdict;
  bool compiled = false;
  bool correct = false;
  std::optional<std::string> device;
  std::optional<double> runtime_ms, runtime_mean_ms, runtime_std_ms, runtime_min_ms, runtime_max_ms;
  std::optional<double> runtime_p10_ms, runtime_p90_ms;
  std::optional<double> baseline_ms, baseline_mean_ms;
  std::optional<double> speedup;
  std::optional<double> custom_kernel_share;
  std::optional<std::int64_t> runtime_trials;
  std::optional<std::string> compile_path;
  std::optional<std::string> error_class, error_message;
  // Only with LoadOptions::sources.
  std::optional<std::string> candidate;
  std::optional<std::string> compile_log;
};

struct RunResults {
  RunRow run;
  std::vector<ProblemRow> problems;   // every problem the run covers, by problem id
  std::vector<SampleResult> samples;  // by problem id, then sample index
};

struct LoadOptions {
  bool sources = false;  // candidate sources and compile logs
};

// Errors: "no run N in FILE", and the store's read errors. Works on databases of schema
// version 1 and later (columns added later read as absent).
Result<RunResults> load_run_results(Store& store, std::int64_t run, LoadOptions options = {});

// The problem's record among run.problems, or nullptr.
const ProblemRow* find_problem(const RunResults& run, std::int64_t problem_id);

}  // namespace dicebench::results
