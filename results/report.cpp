// Computing a run's report from its per-sample results (see run_results.hpp, which reads older
// schemas too).
#include "results/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "results/run_results.hpp"

namespace dicebench::results {
namespace {

struct SampleFacts {
  bool pending = false;
  bool compiled = false;
  bool correct = false;
  std::optional<double> speedup;
  std::string verdict;  // for decided samples
};

struct ProblemFacts {
  int level = 0;
  std::vector<SampleFacts> samples;
};

LevelReport summarize(std::optional<int> level, const std::vector<const ProblemFacts*>& problems) {
  LevelReport report;
  report.level = level;
  report.problems = static_cast<std::int64_t>(problems.size());
  double log_sum = 0;
  std::vector<std::int64_t> fast(std::size(kFastPThresholds), 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> decided_correct;  // per problem: n, c
  for (const ProblemFacts* problem : problems) {
    std::int64_t n = 0;
    std::int64_t c = 0;
    for (const SampleFacts& sample : problem->samples) {
      ++report.samples;
      if (sample.pending) {
        ++report.pending;
        continue;
      }
      ++n;
      ++report.verdicts[sample.verdict];
      if (sample.compiled) ++report.compiled;
      if (!sample.correct) continue;
      ++c;
      if (!sample.speedup) continue;
      const double speedup = *sample.speedup;
      for (size_t i = 0; i < std::size(kFastPThresholds); ++i) {
        if (speedup > kFastPThresholds[i]) ++fast[i];
      }
      if (speedup > 0 && std::isfinite(speedup)) {
        log_sum += std::log(speedup);
        ++report.speedup_samples;
      }
    }
    report.correct += c;
    decided_correct.emplace_back(n, c);
  }
  report.decided = report.samples - report.pending;
  if (report.decided > 0) {
    const double decided = static_cast<double>(report.decided);
    report.compiled_rate = static_cast<double>(report.compiled) / decided;
    report.correct_rate = static_cast<double>(report.correct) / decided;
  }
  for (size_t i = 0; i < std::size(kFastPThresholds); ++i) {
    FastP entry{kFastPThresholds[i], std::nullopt};
    if (report.decided > 0) entry.value = static_cast<double>(fast[i]) / static_cast<double>(report.decided);
    report.fast_p.push_back(entry);
  }
  if (report.speedup_samples > 0) {
    report.geomean_speedup = std::exp(log_sum / static_cast<double>(report.speedup_samples));
  }
  if (!decided_correct.empty()) {
    report.min_decided_per_problem = decided_correct.front().first;
    for (const auto& [n, c] : decided_correct) report.min_decided_per_problem = std::min(report.min_decided_per_problem, n);
    if (report.min_decided_per_problem >= 2) {
      for (int k : kPassAtK) {
        if (k > report.min_decided_per_problem) break;
        double sum = 0;
        for (const auto& [n, c] : decided_correct) sum += unbiased_pass_at_k(n, c, k);
        report.pass_at_k.push_back({k, sum / static_cast<double>(decided_correct.size())});
      }
    }
  }
  return report;
}

}  // namespace

double unbiased_pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k) {
  if (n - c < k) return 1.0;
  // C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i)
  double ratio = 1.0;
  for (std::int64_t i = n - c + 1; i <= n; ++i) ratio *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - ratio;
}

RunReport compute_report(const RunResults& results) {
  RunReport report;
  report.run = results.run;
  std::map<std::int64_t, ProblemFacts> problems;
  for (const ProblemRow& problem : results.problems) problems[problem.problem_id].level = problem.level;
  for (const SampleResult& s : results.samples) {
    ProblemFacts& problem = problems[s.problem_id];
    problem.level = s.level;
    problem.samples.push_back({s.pending, s.compiled, s.correct, s.speedup, s.verdict});
  }

  std::map<int, std::vector<const ProblemFacts*>> by_level;
  std::vector<const ProblemFacts*> all;
  for (const auto& [id, problem] : problems) {
    by_level[problem.level].push_back(&problem);
    all.push_back(&problem);
  }
  for (const auto& [level, level_problems] : by_level) report.levels.push_back(summarize(level, level_problems));
  report.total = summarize(std::nullopt, all);
  return report;
}

Result<RunReport> compute_report(Store& store, std::int64_t run) {
  auto results = load_run_results(store, run);
  if (!results.ok()) return results.error();
  return compute_report(*results);
}

}  // namespace dicebench::results
