// KernelBench-style metrics of one run for `dicebench report`: per level and in total, the
// compiled and correct rates, fast_p, the geometric-mean speedup of correct samples, unbiased
// pass@k and verdict counts; how many evaluations carry each flag; and correct %, fast_1 and the
// geometric mean with and without degenerate problems (those with traits, core/spec/vocabulary.toml).
// Rates are fractions in [0, 1].
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "results/store/rows.hpp"

namespace dicebench::results {

class Store;

// The thresholds p of fast_p and the k of pass@k that reports show.
inline constexpr double kFastPThresholds[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
inline constexpr int kPassAtK[] = {1, 2, 5, 10, 20, 50, 100};

struct ReportOptions {
  // fast_p and the geometric-mean speedup over non-degenerate problems only (problems whose traits
  // were never checked count as non-degenerate).
  bool exclude_degenerate = false;
};

struct FastP {
  double p = 0;
  std::optional<double> value;  // none when nothing is decided
};

struct PassAtK {
  int k = 0;
  double value = 0;
};

// Correct %, fast_1 and the geometric-mean speedup over one set of problems: all of them, or the
// non-degenerate ones.
struct HeadlineFigures {
  std::int64_t problems = 0;
  std::int64_t decided = 0;
  std::int64_t correct = 0;
  std::optional<double> correct_rate;
  std::optional<double> fast_1;
  std::optional<double> geomean_speedup;
};

// Figures over one level's problems (or all of them). A sample is pending while it has a
// candidate but no evaluation; every other sample is decided (no candidate and no evaluation
// counts as extraction_failed).
struct LevelReport {
  std::optional<int> level;  // none: the total row
  std::int64_t problems = 0;
  std::int64_t samples = 0;
  std::int64_t pending = 0;
  std::int64_t decided = 0;
  std::int64_t compiled = 0;
  std::int64_t correct = 0;
  std::optional<double> compiled_rate;  // compiled / decided
  std::optional<double> correct_rate;   // correct / decided
  // fraction of decided samples that count as fast at p (counts_as_fast), one per threshold
  std::vector<FastP> fast_p;
  std::optional<double> geomean_speedup;  // over correct samples that have a speedup
  std::int64_t speedup_samples = 0;       // how many samples the geomean covers
  // fast_p and geomean_speedup leave out the degenerate problems (ReportOptions::exclude_degenerate).
  bool excludes_degenerate = false;
  // The fewest decided samples of any problem; pass@k is given for k <= this when it is >= 2.
  std::int64_t min_decided_per_problem = 0;
  std::vector<PassAtK> pass_at_k;
  std::map<std::string, std::int64_t> verdicts;  // decided samples by verdict name
  // extraction_failed samples whose request failed (no completion came: SampleResult::request_error),
  // counted apart from those whose completion held no code
  std::int64_t request_failures = 0;
  std::map<std::string, std::int64_t> flags;   // evaluations carrying each flag, by flag name
  std::int64_t degenerate_problems = 0;        // problems with at least one trait
  std::int64_t unchecked_problems = 0;         // problems whose traits were never checked
  std::map<std::string, std::int64_t> traits;  // degenerate problems per trait name
  HeadlineFigures all_problems;                // always over every problem
  HeadlineFigures non_degenerate;              // over the problems without traits
  // Kernel infilling: samples whose extraction measured the middle (SampleResult's infill_*; pending
  // ones too, as extraction measured them),
  // how many matched the reference middle exactly, and their mean edit distance to it.
  std::int64_t infill_samples = 0;
  std::int64_t infill_exact = 0;
  std::optional<double> infill_exact_rate;
  std::optional<double> infill_mean_edit_distance;
};

struct RunReport {
  RunRow run;
  std::vector<RunRow> parts;  // the single-level runs a combined report puts together (RunResults::parts)
  ReportOptions options;
  std::vector<LevelReport> levels;  // by level
  LevelReport total;
};

struct RunResults;
struct SampleResult;

Result<RunReport> compute_report(Store& store, std::int64_t run, ReportOptions options = {});
RunReport compute_report(const RunResults& results, ReportOptions options = {});

// Whether a sample counts toward fast_p at threshold p: correct, with a speedup strictly above p,
// and not flagged below_memory_floor (faster than moving its data allows: the timing is not real).
// The one rule of the report, the comparison's bootstrap and the HTML page's curve.
bool counts_as_fast(const SampleResult& sample, double p);

// The unbiased estimator 1 - C(n-c, k) / C(n, k) of pass@k for one problem with n samples of
// which c are correct, computed as a product (no overflow). Requires 0 <= c <= n and 1 <= k <= n.
double unbiased_pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k);

}  // namespace dicebench::results
