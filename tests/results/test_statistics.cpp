// The exact McNemar test, quantiles and the seeded bootstrap against values computed by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "results/report/statistics.hpp"

using namespace dicebench;
using namespace dicebench::results;

TEST_CASE("exact McNemar p-values match hand-computed binomial tails") {
  CHECK(mcnemar_exact_p(0, 0) == 1.0);
  CHECK(mcnemar_exact_p(1, 0) == 1.0);                       // 2 * 1/2, clamped
  CHECK(mcnemar_exact_p(5, 0) == doctest::Approx(0.0625));   // 2 * 1/32
  CHECK(mcnemar_exact_p(0, 6) == doctest::Approx(0.03125));  // 2 * 1/64
  // n = 12, k = 2: (C(12,0) + C(12,1) + C(12,2)) / 4096 = (1 + 12 + 66) / 4096; doubled.
  CHECK(mcnemar_exact_p(10, 2) == doctest::Approx(2.0 * 79.0 / 4096.0).epsilon(1e-12));
  CHECK(mcnemar_exact_p(2, 10) == doctest::Approx(2.0 * 79.0 / 4096.0).epsilon(1e-12));
  // n = 9, k = 3: (1 + 9 + 36 + 84) / 512 = 130/512; doubled 0.5078125.
  CHECK(mcnemar_exact_p(3, 6) == doctest::Approx(0.5078125).epsilon(1e-12));
  CHECK(mcnemar_exact_p(4, 4) == 1.0);
  // n = 1200 (the log-space branch), k = 540: 2 * sum(comb(1200, i) for i <= 540) / 2**1200 with
  // Python's exact integers = 0.0005864176734893937.
  CHECK(mcnemar_exact_p(540, 660) == doctest::Approx(0.0005864176734893937).epsilon(1e-9));
  // Large n stays finite and tiny: 1000 to 0 is 2 / 2^1000.
  const double p = mcnemar_exact_p(1000, 0);
  CHECK(p > 0);
  CHECK(std::log2(p) == doctest::Approx(-999.0).epsilon(1e-12));
}

TEST_CASE("quantiles interpolate linearly between order statistics") {
  const std::vector<double> values = {1, 2, 3, 4, 10};
  CHECK(quantile_sorted(values, 0.0) == 1.0);
  CHECK(quantile_sorted(values, 1.0) == 10.0);
  CHECK(quantile_sorted(values, 0.5) == 3.0);
  CHECK(quantile_sorted(values, 0.875) == doctest::Approx(7.0));  // position 3.5: 4 + 0.5 * 6
  CHECK(quantile_sorted({5.0}, 0.3) == 5.0);
}

TEST_CASE("the bootstrap is reproducible from its seed and brackets the statistic") {
  // The mean of 0/1 outcomes, 6 of 10 ones.
  const std::vector<double> outcomes = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  auto mean = [&](const ResampleWeights& w) -> std::optional<double> {
    double sum = 0;
    for (std::size_t i = 0; i < w.size(); ++i) sum += w[i] * outcomes[i];
    return sum / static_cast<double>(outcomes.size());
  };
  const BootstrapResult first = bootstrap(outcomes.size(), mean);
  const BootstrapResult again = bootstrap(outcomes.size(), mean);
  REQUIRE(first.interval);
  CHECK(first.defined_resamples == 2000);
  CHECK(first.interval->low == again.interval->low);
  CHECK(first.interval->high == again.interval->high);
  CHECK(first.interval->contains(0.6));
  CHECK(first.interval->low >= 0.2);  // the normal approximation gives about [0.30, 0.90]
  CHECK(first.interval->high <= 1.0);
  // Another seed draws other resamples: a continuous statistic's interval moves.
  const std::vector<double> times = {0.3, 1.7, 2.2, 5.1, 0.9, 3.3, 4.8, 2.9, 1.1, 0.2};
  auto mean_time = [&](const ResampleWeights& w) -> std::optional<double> {
    double sum = 0;
    for (std::size_t i = 0; i < w.size(); ++i) sum += w[i] * times[i];
    return sum / static_cast<double>(times.size());
  };
  BootstrapOptions other;
  other.seed = 7;
  const auto seeded = bootstrap(times.size(), mean_time);
  const auto reseeded = bootstrap(times.size(), mean_time, other);
  CHECK(seeded.interval->contains(2.25));  // the mean
  CHECK(reseeded.interval->contains(2.25));
  CHECK(reseeded.interval->low != seeded.interval->low);

  // Every draw weighs the units to a total of n.
  bool sums_ok = true;
  bootstrap(7, [&](const ResampleWeights& w) -> std::optional<double> {
    std::uint32_t total = 0;
    for (auto x : w) total += x;
    sums_ok = sums_ok && total == 7;
    return 0.0;
  });
  CHECK(sums_ok);

  // Undefined everywhere: no interval. A constant: a zero-width interval.
  CHECK_FALSE(bootstrap(5, [](const ResampleWeights&) -> std::optional<double> { return std::nullopt; }).interval);
  const auto constant = bootstrap(5, [](const ResampleWeights&) -> std::optional<double> { return 2.5; });
  CHECK(constant.interval->low == 2.5);
  CHECK(constant.interval->high == 2.5);
}
