// Comparing two runs of one suite (`dicebench compare`, and what `dicebench gate` checks): per
// level and in total every metric of the report side by side with its delta and whether the
// change is beyond noise, and the problems that flipped.
//
// Pairing: a sample is paired with the sample of the same problem and sample index in the
// other run when both are decided. Correct % and compiled % are tested with the exact McNemar
// test on those pairs; fast_p and the geometric-mean speedup with a percentile bootstrap over
// the problems both runs cover (each resample draws problems with replacement and recomputes
// the metric's delta on the same problems in both runs).
//
// Flips: a paired sample that became incorrect or correct, or (correct in both) slower or faster:
// its timing spreads (p10..p90) do not overlap and its median changed by more than
// CompareOptions::min_change of A's. A correctness flip of a sample flagged borderline on either
// side (its margin within [0.5, 2]: new inputs may flip it back) is marked borderline: noise,
// unless the gate's rules say otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "results/report/report.hpp"
#include "results/report/statistics.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::results {

struct CompareOptions {
  double alpha = 0.05;         // McNemar: beyond noise when p < alpha
  BootstrapOptions bootstrap;  // its confidence is 1 - alpha by default
  // Slower or faster only when the median runtime changed by more than this fraction of A's
  // median (and beyond both timing spreads). In [0, 1).
  double min_change = 0.05;
};

// Checks a --min-change value: a finite fraction in [0, 1). Errors say what is wrong with `text`.
Result<double> parse_min_change(const std::string& text);

enum class NoiseTest { none, mcnemar, bootstrap };

struct MetricComparison {
  std::string metric;                 // "correct_rate", "fast_1", "geomean_speedup", "pass@1", "problems", ...
  std::optional<double> a, b, delta;  // delta = b - a
  NoiseTest test = NoiseTest::none;
  std::optional<double> p_value;      // mcnemar
  std::int64_t gained = 0, lost = 0;  // mcnemar: pairs that became true / false
  std::optional<Interval> interval;   // bootstrap: interval of the delta
  bool beyond_noise = false;
};

struct LevelComparison {
  std::optional<int> level;  // none: all levels
  std::int64_t paired_samples = 0;
  std::int64_t paired_problems = 0;
  std::vector<MetricComparison> metrics;
  const MetricComparison* find(const std::string& metric) const;
};

enum class FlipKind { became_incorrect, became_correct, became_slower, became_faster };
std::string_view flip_kind_name(FlipKind kind);

struct Flip {
  FlipKind kind = FlipKind::became_incorrect;
  std::int64_t problem_id = 0;
  int level = 0;
  std::string problem;
  int sample_index = 0;
  std::string verdict_a, verdict_b;
  std::optional<double> runtime_a_ms, runtime_b_ms;  // medians
  std::optional<double> margin_a, margin_b;
  // A correctness flip of a sample flagged borderline in A or B: likely noise of the input draw.
  bool borderline = false;
};

struct Comparison {
  RunRow a, b;
  CompareOptions options;
  std::vector<LevelComparison> levels;  // by level
  LevelComparison total;
  std::vector<Flip> flips;  // by problem id, sample index; borderline ones included (Flip::borderline)
};

// Error when the runs are of different suites.
Result<Comparison> compare_runs(const RunResults& a, const RunResults& b, const CompareOptions& options = {});

// The metric names compare_runs reports, as the report calls them (fast_p as "fast_<p>").
std::string fast_p_metric(double p);

}  // namespace dicebench::results
