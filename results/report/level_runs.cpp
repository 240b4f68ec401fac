// Putting single-level runs of one model together as one run over their levels.
#include "results/report/level_runs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace dicebench::results {

Result<RunResults> combine_level_runs(std::vector<RunResults> runs) {
  if (runs.empty()) return make_error("no runs to put together");
  std::map<int, std::int64_t> run_of_level;
  for (const RunResults& run : runs) {
    if (run.run.model != runs[0].run.model)
      return make_error(
          fmt::format("run {} is of model {} and run {} of model {}: only runs of one model make one table by level",
                      runs[0].run.id, runs[0].run.model, run.run.id, run.run.model));
    std::set<int> levels;
    for (const ProblemRow& problem : run.problems) levels.insert(problem.level);
    if (levels.size() != 1)
      return make_error(fmt::format("run {} covers {} levels: only single-level runs make one table by level",
                                    run.run.id, levels.size()));
    const int level = *levels.begin();
    if (const auto [it, added] = run_of_level.emplace(level, run.run.id); !added)
      return make_error(
          fmt::format("runs {} and {} are both of level {}: give one run per level (or see dicebench compare)",
                      it->second, run.run.id, level));
  }
  RunResults out;
  out.run = runs[0].run;
  std::vector<std::string> suites;
  for (RunResults& run : runs) {
    out.parts.push_back(run.run);
    suites.push_back(run.run.suite);
    out.run.created = std::min(out.run.created, run.run.created);
    if (out.run.finished && run.run.finished)
      out.run.finished = std::max(*out.run.finished, *run.run.finished);
    else
      out.run.finished.reset();
    if (out.run.status == RunStatus::finished) out.run.status = run.run.status;
    for (ProblemRow& problem : run.problems) out.problems.push_back(std::move(problem));
    for (SampleResult& sample : run.samples) out.samples.push_back(std::move(sample));
  }
  out.run.suite = fmt::format("{}", fmt::join(suites, "+"));
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const ProblemRow& a, const ProblemRow& b) { return a.key() < b.key(); });
  std::stable_sort(out.samples.begin(), out.samples.end(), [](const SampleResult& a, const SampleResult& b) {
    return std::pair(a.key(), a.sample_index) < std::pair(b.key(), b.sample_index);
  });
  return out;
}

}  // namespace dicebench::results
