// Exact McNemar test, quantiles and the seeded percentile bootstrap.
#include "results/report/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace dicebench::results {

double mcnemar_exact_p(std::int64_t b, std::int64_t c) {
  const std::int64_t n = b + c;
  if (n == 0) return 1.0;
  const std::int64_t k = std::min(b, c);
  double tail = 0;
  if (n <= 1000) {
    // C(n, i) / 2^n term by term from 2^-n (exact in a double): near-exact sums.
    double term = std::ldexp(1.0, -static_cast<int>(n));
    for (std::int64_t i = 0; i <= k; ++i) {
      tail += term;
      term = term * static_cast<double>(n - i) / static_cast<double>(i + 1);
    }
  } else {
    // In log space: no underflow for large n.
    const double log_half_n = static_cast<double>(n) * std::log(0.5);
    for (std::int64_t i = 0; i <= k; ++i) {
      const double log_choose = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                                std::lgamma(static_cast<double>(n - i) + 1);
      tail += std::exp(log_choose + log_half_n);
    }
  }
  return std::min(1.0, 2.0 * tail);
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

BootstrapResult bootstrap(std::size_t units,
                          const std::function<std::optional<double>(const ResampleWeights&)>& statistic,
                          const BootstrapOptions& options) {
  BootstrapResult result;
  if (units == 0) return result;
  std::mt19937_64 engine(options.seed);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(options.resamples));
  ResampleWeights weights(units);
  for (int r = 0; r < options.resamples; ++r) {
    std::fill(weights.begin(), weights.end(), 0u);
    // engine() % units rather than a distribution: distributions differ between standard
    // libraries, the engine's output does not. The modulo bias is below 1e-15 for any run size.
    for (std::size_t i = 0; i < units; ++i) ++weights[engine() % units];
    if (const auto value = statistic(weights)) values.push_back(*value);
  }
  result.defined_resamples = static_cast<int>(values.size());
  if (values.empty()) return result;
  std::sort(values.begin(), values.end());
  const double tail = (1.0 - options.confidence) / 2.0;
  result.interval = Interval{quantile_sorted(values, tail), quantile_sorted(values, 1.0 - tail)};
  return result;
}

}  // namespace dicebench::results
