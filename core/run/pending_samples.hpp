// Which samples of a run the evaluation stage evaluates: those without an evaluation row, in stored
// order, each of a problem the suite still has.
#pragma once

#include "core/base/problem_key.hpp"
#include "core/base/result.hpp"
#include "results/store/store.hpp"

#include <map>
#include <string>
#include <vector>

namespace dicebench::run {

// A problem's reference source and its content hash (what baselines and traits are keyed by).
struct ProblemSource {
  std::string source;
  std::string content_hash;
};

// The samples of `run` that have no evaluation yet (candidate texts included); a sample with a
// candidate of a problem missing from `problems` is an error.
Result<std::vector<results::SampleRow>> pending_samples(results::Store& store, int64_t run,
                                                        const std::map<ProblemKey, ProblemSource>& problems);

// How many samples of `run` still need an evaluation row (with or without a candidate).
Result<size_t> unevaluated_samples(results::Store& store, int64_t run);

}  // namespace dicebench::run
