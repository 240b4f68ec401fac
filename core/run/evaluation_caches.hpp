// The measurements runs share through the store: reference baselines, problems' degenerate traits
// and a device's memory bandwidth. Before a slot evaluates a problem's candidate its evaluator gets
// what the store holds; after, what the evaluation measured is stored for later runs.
#pragma once

#include "core/base/result.hpp"
#include "harness/client/evaluator.hpp"
#include "results/store/baseline_cache.hpp"
#include "results/store/store.hpp"
#include "results/store/trait_cache.hpp"

#include <set>
#include <string>

namespace dicebench::run {

struct CacheKeys {
  results::BaselineKey baseline;
  results::TraitKey traits;
};

// A problem's keys on this evaluator's device: baselines are shared by runs on the same GPU, torch
// and timing method (the reference worker says which device, torch and timer it has), traits by
// runs on the same device with the same tolerance.
Result<CacheKeys> cache_keys(harness::Evaluator& evaluator, const std::string& problem_hash);

class EvaluationCaches {
 public:
  // Gives `evaluator` (of `slot`) the stored baseline and traits of the problem, once per problem
  // and slot, and the device's stored bandwidth once per slot unless eval.bandwidth_gbps set one.
  // Callers hold the store's lock.
  Result<void> prime(results::Store& store, harness::Evaluator& evaluator, const std::string& slot,
                     const CacheKeys& keys);

 private:
  std::set<std::string> looked_up_;  // "<problem hash>@<slot>", "bandwidth@<slot>"
};

// Stores the baseline, traits and bandwidth `evaluation` measured (not those it was given).
// Callers hold the store's lock.
Result<void> store_measured(results::Store& store, const CacheKeys& keys, const Evaluation& evaluation);

}  // namespace dicebench::run
