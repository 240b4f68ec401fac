// Side-by-side metrics of two runs with McNemar and bootstrap noise tests, and flipped problems.
#include "results/report/compare.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>

namespace dicebench::results {
namespace {

constexpr std::size_t kThresholds = std::size(kFastPThresholds);

using SampleKey = std::pair<ProblemKey, int>;  // problem, sample index

// Per problem, what the bootstrap resamples: decided samples, fast_p counts, log speedups.
struct ProblemTotals {
  double decided = 0;
  std::array<double, kThresholds> fast{};
  double log_sum = 0;
  double log_count = 0;
};

void add_sample(ProblemTotals& totals, const SampleResult& s) {
  totals.decided += 1;
  if (!s.correct || !s.speedup) return;
  for (std::size_t i = 0; i < kThresholds; ++i)
    if (counts_as_fast(s, kFastPThresholds[i])) totals.fast[i] += 1;
  if (*s.speedup > 0 && std::isfinite(*s.speedup)) {
    totals.log_sum += std::log(*s.speedup);
    totals.log_count += 1;
  }
}

// The decided samples of one run (at one level, or all), by problem and sample index.
std::map<SampleKey, const SampleResult*> decided_samples(const RunResults& run, std::optional<int> level) {
  std::map<SampleKey, const SampleResult*> out;
  for (const SampleResult& s : run.samples)
    if (!s.pending && (!level || s.level == *level)) out[{s.key(), s.sample_index}] = &s;
  return out;
}

const LevelReport* level_report(const RunReport& report, std::optional<int> level) {
  if (!level) return &report.total;
  for (const LevelReport& l : report.levels)
    if (l.level == level) return &l;
  return nullptr;
}

std::optional<double> fast_value(const LevelReport* report, double p) {
  if (!report) return std::nullopt;
  for (const FastP& entry : report->fast_p)
    if (entry.p == p) return entry.value;
  return std::nullopt;
}

std::optional<double> pass_value(const LevelReport* report, int k) {
  if (!report) return std::nullopt;
  for (const PassAtK& entry : report->pass_at_k)
    if (entry.k == k) return entry.value;
  return std::nullopt;
}

MetricComparison side_by_side(std::string metric, std::optional<double> a, std::optional<double> b) {
  MetricComparison m;
  m.metric = std::move(metric);
  m.a = a;
  m.b = b;
  if (a && b) m.delta = *b - *a;
  return m;
}

std::optional<double> count(const LevelReport* report, std::int64_t LevelReport::*field) {
  return report ? std::optional<double>(static_cast<double>(report->*field)) : std::nullopt;
}

// The timing spread of a correct sample: p10..p90, else median +- std.
std::optional<Interval> spread(const SampleResult& s) {
  if (s.runtime_p10_ms && s.runtime_p90_ms) return Interval{*s.runtime_p10_ms, *s.runtime_p90_ms};
  if (s.runtime_ms && s.runtime_std_ms)
    return Interval{*s.runtime_ms - *s.runtime_std_ms, *s.runtime_ms + *s.runtime_std_ms};
  return std::nullopt;
}

LevelComparison compare_level(std::optional<int> level, const RunResults& a, const RunResults& b, const RunReport& ra,
                              const RunReport& rb, const CompareOptions& options) {
  LevelComparison out;
  out.level = level;
  const LevelReport* la = level_report(ra, level);
  const LevelReport* lb = level_report(rb, level);
  const auto samples_a = decided_samples(a, level);
  const auto samples_b = decided_samples(b, level);

  // McNemar pairs.
  std::int64_t compiled_gained = 0, compiled_lost = 0, correct_gained = 0, correct_lost = 0;
  for (const auto& [key, sa] : samples_a) {
    const auto it = samples_b.find(key);
    if (it == samples_b.end()) continue;
    const SampleResult* sb = it->second;
    ++out.paired_samples;
    compiled_gained += !sa->compiled && sb->compiled;
    compiled_lost += sa->compiled && !sb->compiled;
    correct_gained += !sa->correct && sb->correct;
    correct_lost += sa->correct && !sb->correct;
  }
  // Bootstrap units: problems with decided samples in both runs.
  std::map<ProblemKey, ProblemTotals> totals_a, totals_b;
  for (const auto& [key, s] : samples_a) add_sample(totals_a[key.first], *s);
  for (const auto& [key, s] : samples_b) add_sample(totals_b[key.first], *s);
  std::vector<std::pair<ProblemTotals, ProblemTotals>> units;
  for (const auto& [problem, ta] : totals_a) {
    const auto it = totals_b.find(problem);
    if (it != totals_b.end()) units.emplace_back(ta, it->second);
  }
  out.paired_problems = static_cast<std::int64_t>(units.size());

  auto mcnemar = [&](std::string metric, std::optional<double> va, std::optional<double> vb, std::int64_t gained,
                     std::int64_t lost) {
    MetricComparison m = side_by_side(std::move(metric), va, vb);
    m.test = NoiseTest::mcnemar;
    m.gained = gained;
    m.lost = lost;
    m.p_value = mcnemar_exact_p(gained, lost);
    m.beyond_noise = *m.p_value < options.alpha;
    return m;
  };
  // `metric_of(weights, side)` computes the metric over resampled problems of one run.
  auto bootstrapped = [&](std::string metric, std::optional<double> va, std::optional<double> vb, auto metric_of) {
    MetricComparison m = side_by_side(std::move(metric), va, vb);
    m.test = NoiseTest::bootstrap;
    const BootstrapResult result = bootstrap(
        units.size(),
        [&](const ResampleWeights& w) -> std::optional<double> {
          const auto ma = metric_of(w, &std::pair<ProblemTotals, ProblemTotals>::first);
          const auto mb = metric_of(w, &std::pair<ProblemTotals, ProblemTotals>::second);
          if (!ma || !mb) return std::nullopt;
          return *mb - *ma;
        },
        options.bootstrap);
    m.interval = result.interval;
    m.beyond_noise = m.interval && !m.interval->contains(0.0);
    return m;
  };

  out.metrics.push_back(side_by_side("problems", count(la, &LevelReport::problems), count(lb, &LevelReport::problems)));
  out.metrics.push_back(side_by_side("samples", count(la, &LevelReport::samples), count(lb, &LevelReport::samples)));
  out.metrics.push_back(side_by_side("pending", count(la, &LevelReport::pending), count(lb, &LevelReport::pending)));
  out.metrics.push_back(mcnemar("compiled_rate", la ? la->compiled_rate : std::nullopt,
                                lb ? lb->compiled_rate : std::nullopt, compiled_gained, compiled_lost));
  out.metrics.push_back(mcnemar("correct_rate", la ? la->correct_rate : std::nullopt,
                                lb ? lb->correct_rate : std::nullopt, correct_gained, correct_lost));
  for (std::size_t i = 0; i < kThresholds; ++i) {
    const double p = kFastPThresholds[i];
    out.metrics.push_back(bootstrapped(fast_p_metric(p), fast_value(la, p), fast_value(lb, p),
                                       [&](const ResampleWeights& w, auto side) -> std::optional<double> {
                                         double fast = 0, decided = 0;
                                         for (std::size_t u = 0; u < units.size(); ++u) {
                                           fast += w[u] * (units[u].*side).fast[i];
                                           decided += w[u] * (units[u].*side).decided;
                                         }
                                         if (decided == 0) return std::nullopt;
                                         return fast / decided;
                                       }));
  }
  out.metrics.push_back(bootstrapped("geomean_speedup", la ? la->geomean_speedup : std::nullopt,
                                     lb ? lb->geomean_speedup : std::nullopt,
                                     [&](const ResampleWeights& w, auto side) -> std::optional<double> {
                                       double sum = 0, n = 0;
                                       for (std::size_t u = 0; u < units.size(); ++u) {
                                         sum += w[u] * (units[u].*side).log_sum;
                                         n += w[u] * (units[u].*side).log_count;
                                       }
                                       if (n == 0) return std::nullopt;
                                       return std::exp(sum / n);
                                     }));
  for (int k : kPassAtK) {
    const auto va = pass_value(la, k), vb = pass_value(lb, k);
    if (va || vb) out.metrics.push_back(side_by_side(fmt::format("pass@{}", k), va, vb));
  }
  return out;
}

// Beyond both timing spreads and by more than min_change of A's median.
std::optional<FlipKind> timing_flip(const SampleResult& a, const SampleResult& b, double min_change) {
  const auto spread_a = spread(a), spread_b = spread(b);
  if (!spread_a || !spread_b || !a.runtime_ms || !b.runtime_ms || *a.runtime_ms <= 0) return std::nullopt;
  if (std::abs(*b.runtime_ms - *a.runtime_ms) / *a.runtime_ms <= min_change) return std::nullopt;
  if (spread_b->low > spread_a->high) return FlipKind::became_slower;
  if (spread_b->high < spread_a->low) return FlipKind::became_faster;
  return std::nullopt;
}

std::vector<Flip> find_flips(const RunResults& a, const RunResults& b, const CompareOptions& options) {
  std::vector<Flip> flips;
  const auto samples_b = decided_samples(b, std::nullopt);
  for (const auto& [key, sa] : decided_samples(a, std::nullopt)) {
    const auto it = samples_b.find(key);
    if (it == samples_b.end()) continue;
    const SampleResult* sb = it->second;
    std::optional<FlipKind> kind;
    if (sa->correct && !sb->correct) kind = FlipKind::became_incorrect;
    if (!sa->correct && sb->correct) kind = FlipKind::became_correct;
    if (sa->correct && sb->correct) kind = timing_flip(*sa, *sb, options.min_change);
    if (!kind) continue;
    const ProblemRow* problem = find_problem(a, key.first);
    const bool correctness = *kind == FlipKind::became_incorrect || *kind == FlipKind::became_correct;
    flips.push_back(
        {*kind, key.first.problem_id, sa->level, problem ? problem->name : std::string(), key.second, sa->verdict(),
         sb->verdict(), sa->runtime_ms, sb->runtime_ms, sa->margin, sb->margin,
         correctness && (sa->has_flag(EvaluationFlag::borderline) || sb->has_flag(EvaluationFlag::borderline))});
  }
  return flips;
}

}  // namespace

std::string fast_p_metric(double p) { return fmt::format("fast_{}", p); }

Result<double> parse_min_change(const std::string& text) {
  const std::string why =
      fmt::format("--min-change must be a fraction of the runtime in [0, 1), such as 0.05; not '{}'", text);
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return make_error(why);
  }
  if (used != text.size() || !std::isfinite(value) || value < 0 || value >= 1) return make_error(why);
  return value;
}

std::string_view flip_kind_name(FlipKind kind) {
  switch (kind) {
    case FlipKind::became_incorrect:
      return "correct -> incorrect";
    case FlipKind::became_correct:
      return "incorrect -> correct";
    case FlipKind::became_slower:
      return "slower";
    case FlipKind::became_faster:
      return "faster";
  }
  return "?";
}

const MetricComparison* LevelComparison::find(const std::string& metric) const {
  for (const MetricComparison& m : metrics)
    if (m.metric == metric) return &m;
  return nullptr;
}

Result<Comparison> compare_runs(const RunResults& a, const RunResults& b, const CompareOptions& options) {
  if (a.run.suite != b.run.suite) {
    return make_error(fmt::format("run {} is of suite {} and run {} of suite {}: only runs of one suite compare",
                                  a.run.id, a.run.suite, b.run.id, b.run.suite));
  }
  Comparison out;
  out.a = a.run;
  out.b = b.run;
  out.options = options;
  const RunReport ra = compute_report(a), rb = compute_report(b);
  std::set<int> levels;
  for (const LevelReport& l : ra.levels) levels.insert(*l.level);
  for (const LevelReport& l : rb.levels) levels.insert(*l.level);
  for (int level : levels) out.levels.push_back(compare_level(level, a, b, ra, rb, options));
  out.total = compare_level(std::nullopt, a, b, ra, rb, options);
  out.flips = find_flips(a, b, options);
  return out;
}

}  // namespace dicebench::results
