// The samples a run's evaluation stage still has to evaluate.
#include "core/run/pending_samples.hpp"

#include <fmt/format.h>

#include <set>

namespace dicebench::run {

Result<std::vector<results::SampleRow>> pending_samples(results::Store& store, int64_t run,
                                                        const std::map<ProblemKey, ProblemSource>& problems) {
  auto samples = store.samples(run, false);
  if (!samples) return samples.error();
  auto evaluated = store.evaluations(run);
  if (!evaluated) return evaluated.error();
  std::set<int64_t> done;
  for (const auto& e : *evaluated) done.insert(e.sample);
  std::vector<results::SampleRow> todo;
  for (auto& s : *samples)
    if (!done.count(s.id)) todo.push_back(std::move(s));
  for (const auto& sample : todo)
    if (sample.candidate && !problems.count({sample.level, sample.problem_id}))
      return make_error(fmt::format("run {} has a sample of problem {}, which the suite no longer has", run,
                                    problem_key_text({sample.level, sample.problem_id})));
  return todo;
}

Result<size_t> unevaluated_samples(results::Store& store, int64_t run) {
  auto samples = store.sample_count(run);
  if (!samples) return samples.error();
  auto evaluations = store.evaluations(run);
  if (!evaluations) return evaluations.error();
  return static_cast<size_t>(*samples) - evaluations->size();
}

}  // namespace dicebench::run
