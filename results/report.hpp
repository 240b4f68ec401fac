// KernelBench-style metrics of one run for `dicebench report`: per level and in total, the
// compiled and correct rates, fast_p, the geometric-mean speedup of correct samples, unbiased
// pass@k and verdict counts. Rates are fractions in [0, 1].
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "results/rows.hpp"

namespace dicebench::results {

class Store;

// The thresholds p of fast_p and the k of pass@k that reports show.
inline constexpr double kFastPThresholds[] = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
inline constexpr int kPassAtK[] = {1, 2, 5, 10, 20, 50, 100};

struct FastP {
  double p = 0;
  std::optional<double> value;  // none when nothing is decided
};

struct PassAtK {
  int k = 0;
  double value = 0;
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
  // fraction of decided samples that are correct with speedup > p (strictly), one per threshold
  std::vector<FastP> fast_p;
  std::optional<double> geomean_speedup;  // over correct samples that have a speedup
  std::int64_t speedup_samples = 0;       // how many samples the geomean covers
  // The fewest decided samples of any problem; pass@k is given for k <= this when it is >= 2.
  std::int64_t min_decided_per_problem = 0;
  std::vector<PassAtK> pass_at_k;
  std::map<std::string, std::int64_t> verdicts;  // decided samples by verdict name
};

struct RunReport {
  RunRow run;
  std::vector<LevelReport> levels;  // by level
  LevelReport total;
};

struct RunResults;

Result<RunReport> compute_report(Store& store, std::int64_t run);
RunReport compute_report(const RunResults& results);

// The unbiased estimator 1 - C(n-c, k) / C(n, k) of pass@k for one problem with n samples of
// which c are correct, computed as a product (no overflow). Requires 0 <= c <= n and 1 <= k <= n.
double unbiased_pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k);

}  // namespace dicebench::results
