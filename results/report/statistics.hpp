// Small statistics for comparing runs: the exact McNemar test on paired binary outcomes,
// percentiles, and a seeded (reproducible on every platform) percentile bootstrap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace dicebench::results {

// Two-sided exact McNemar test: with b pairs that changed one way and c the other, the
// probability under "no change" (each discordant pair either way with probability 1/2) of a
// split at least as uneven: min(1, 2 * sum_{i <= min(b, c)} C(b + c, i) / 2^(b + c)).
// 1 when there are no discordant pairs.
double mcnemar_exact_p(std::int64_t b, std::int64_t c);

// The q-quantile (0 <= q <= 1) of sorted values with linear interpolation between order
// statistics (numpy's default). Requires a non-empty input.
double quantile_sorted(const std::vector<double>& sorted, double q);

struct Interval {
  double low = 0;
  double high = 0;
  bool contains(double x) const { return low <= x && x <= high; }
};

// One resample: how many times each of the n units was drawn (they sum to n).
using ResampleWeights = std::vector<std::uint32_t>;

struct BootstrapOptions {
  int resamples = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 20261129;
};

struct BootstrapResult {
  std::optional<Interval> interval;  // none when the statistic was undefined in every resample
  int defined_resamples = 0;
};

// Percentile bootstrap over n units drawn with replacement: evaluates `statistic` (which may be
// undefined for a resample) on each resample's weights and returns the central `confidence`
// interval of its values. Draws come from std::mt19937_64 seeded with options.seed, so the
// same inputs give the same interval everywhere.
BootstrapResult bootstrap(std::size_t units,
                          const std::function<std::optional<double>(const ResampleWeights&)>& statistic,
                          const BootstrapOptions& options = {});

}  // namespace dicebench::results
