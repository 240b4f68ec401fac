// Computing a run's report from its per-sample results (see run_results.hpp, which reads older
// schemas too): fast_p by counts_as_fast, and the split by degenerate problems.
#include "results/report/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "results/store/run_results.hpp"

namespace dicebench::results {
namespace {

struct ProblemFacts {
  int level = 0;
  std::optional<std::vector<std::string>> traits;  // none: never checked
  std::vector<const SampleResult*> samples;
};

// What fast_p and the geometric mean need from a set of problems.
struct SpeedTotals {
  std::int64_t problems = 0;
  std::int64_t decided = 0;
  std::int64_t correct = 0;
  std::vector<std::int64_t> fast = std::vector<std::int64_t>(std::size(kFastPThresholds), 0);
  double log_sum = 0;
  std::int64_t logs = 0;

  std::optional<double> fast_rate(std::size_t threshold) const {
    if (decided == 0) return std::nullopt;
    return static_cast<double>(fast[threshold]) / static_cast<double>(decided);
  }
  std::optional<double> geomean() const {
    if (logs == 0) return std::nullopt;
    return std::exp(log_sum / static_cast<double>(logs));
  }
};

SpeedTotals speed_totals(const std::vector<const ProblemFacts*>& problems, bool skip_degenerate) {
  SpeedTotals totals;
  for (const ProblemFacts* problem : problems) {
    if (skip_degenerate && is_degenerate(problem->traits)) continue;
    ++totals.problems;
    for (const SampleResult* sample : problem->samples) {
      if (sample->pending) continue;
      ++totals.decided;
      if (!sample->correct) continue;
      ++totals.correct;
      for (std::size_t i = 0; i < std::size(kFastPThresholds); ++i)
        totals.fast[i] += counts_as_fast(*sample, kFastPThresholds[i]);
      if (sample->speedup && *sample->speedup > 0 && std::isfinite(*sample->speedup)) {
        totals.log_sum += std::log(*sample->speedup);
        ++totals.logs;
      }
    }
  }
  return totals;
}

std::size_t threshold_index(double p) {
  for (std::size_t i = 0; i < std::size(kFastPThresholds); ++i)
    if (kFastPThresholds[i] == p) return i;
  return 0;
}

HeadlineFigures headline(const SpeedTotals& totals) {
  HeadlineFigures h;
  h.problems = totals.problems;
  h.decided = totals.decided;
  h.correct = totals.correct;
  if (totals.decided > 0) h.correct_rate = static_cast<double>(totals.correct) / static_cast<double>(totals.decided);
  h.fast_1 = totals.fast_rate(threshold_index(1.0));
  h.geomean_speedup = totals.geomean();
  return h;
}

LevelReport summarize(std::optional<int> level, const std::vector<const ProblemFacts*>& problems,
                      const ReportOptions& options) {
  LevelReport report;
  report.level = level;
  report.problems = static_cast<std::int64_t>(problems.size());
  report.excludes_degenerate = options.exclude_degenerate;
  std::vector<std::pair<std::int64_t, std::int64_t>> decided_correct;  // per problem: n, c
  double edit_distances = 0;                                           // summed over the infill samples
  for (const ProblemFacts* problem : problems) {
    if (!problem->traits) {
      ++report.unchecked_problems;
    } else if (!problem->traits->empty()) {
      ++report.degenerate_problems;
      for (const std::string& trait : *problem->traits) ++report.traits[trait];
    }
    std::int64_t n = 0;
    std::int64_t c = 0;
    for (const SampleResult* sample : problem->samples) {
      ++report.samples;
      // Measured at extraction: pending samples count too.
      if (sample->infill_exact_match && sample->infill_edit_distance) {
        ++report.infill_samples;
        report.infill_exact += *sample->infill_exact_match;
        edit_distances += static_cast<double>(*sample->infill_edit_distance);
      }
      if (sample->pending) {
        ++report.pending;
        continue;
      }
      ++n;
      ++report.verdicts[sample->verdict()];
      if (sample->request_error) ++report.request_failures;
      for (const SampleFlag& flag : sample->flags) ++report.flags[flag.name];
      if (sample->compiled) ++report.compiled;
      if (sample->correct) ++c;
    }
    report.correct += c;
    decided_correct.emplace_back(n, c);
  }
  report.decided = report.samples - report.pending;
  if (report.infill_samples > 0) {
    report.infill_exact_rate = static_cast<double>(report.infill_exact) / static_cast<double>(report.infill_samples);
    report.infill_mean_edit_distance = edit_distances / static_cast<double>(report.infill_samples);
  }
  if (report.decided > 0) {
    const double decided = static_cast<double>(report.decided);
    report.compiled_rate = static_cast<double>(report.compiled) / decided;
    report.correct_rate = static_cast<double>(report.correct) / decided;
  }
  const SpeedTotals all = speed_totals(problems, false);
  const SpeedTotals non_degenerate = speed_totals(problems, true);
  const SpeedTotals& speed = options.exclude_degenerate ? non_degenerate : all;
  for (std::size_t i = 0; i < std::size(kFastPThresholds); ++i)
    report.fast_p.push_back({kFastPThresholds[i], speed.fast_rate(i)});
  report.geomean_speedup = speed.geomean();
  report.speedup_samples = speed.logs;
  report.all_problems = headline(all);
  report.non_degenerate = headline(non_degenerate);
  if (!decided_correct.empty()) {
    report.min_decided_per_problem = decided_correct.front().first;
    for (const auto& [n, c] : decided_correct)
      report.min_decided_per_problem = std::min(report.min_decided_per_problem, n);
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

bool counts_as_fast(const SampleResult& sample, double p) {
  return sample.correct && sample.speedup && *sample.speedup > p &&
         !sample.has_flag(EvaluationFlag::below_memory_floor);
}

RunReport compute_report(const RunResults& results, ReportOptions options) {
  RunReport report;
  report.run = results.run;
  report.parts = results.parts;
  report.options = options;
  std::map<ProblemKey, ProblemFacts> problems;
  for (const ProblemRow& problem : results.problems) problems[problem.key()].level = problem.level;
  for (const SampleResult& s : results.samples) {
    ProblemFacts& problem = problems[s.key()];
    problem.level = s.level;
    problem.samples.push_back(&s);
  }
  // load_run_results and read_summary have checked every problem's traits: none fails here.
  for (const ProblemRow& problem : results.problems) {
    auto traits = parse_problem_traits(problem.traits_json, "");
    if (traits.ok()) problems[problem.key()].traits = std::move(*traits);
  }

  std::map<int, std::vector<const ProblemFacts*>> by_level;
  std::vector<const ProblemFacts*> all;
  for (const auto& [key, problem] : problems) {
    by_level[problem.level].push_back(&problem);
    all.push_back(&problem);
  }
  for (const auto& [level, level_problems] : by_level)
    report.levels.push_back(summarize(level, level_problems, options));
  report.total = summarize(std::nullopt, all, options);
  return report;
}

Result<RunReport> compute_report(Store& store, std::int64_t run, ReportOptions options) {
  auto results = load_run_results(store, run);
  if (!results.ok()) return results.error();
  return compute_report(*results, options);
}

}  // namespace dicebench::results
