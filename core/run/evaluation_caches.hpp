// The measurements runs share through the store: reference baselines, problems' degenerate traits
// and a device's memory bandwidth. Before a slot evaluates a problem's candidate its evaluator gets
// what the store holds; after, what the evaluation measured is stored for later runs. Baselines
// other evaluators timed (a Ray pool's actors, handed over by the pool) are given the same way.
#pragma once

#include "core/base/result.hpp"
#include "harness/client/evaluator.hpp"
#include "results/store/baseline_cache.hpp"
#include "results/store/store.hpp"
#include "results/store/trait_cache.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace dicebench::run {

struct CacheKeys {
  results::BaselineKey baseline;
  results::TraitKey traits;
};

// A problem's keys on this evaluator's device: baselines are shared by runs on the same GPU, torch
// and timing method (the reference worker says which device, torch and timer it has), traits by
// runs on the same device with the same tolerance.
Result<CacheKeys> cache_keys(harness::Evaluator& evaluator, const std::string& problem_hash);

// Callers of every member hold the cache lock (the store's, where there is one).
class EvaluationCaches {
 public:
  // Gives `evaluator` (of `slot`) the problem's baseline (the store's, else one given under its
  // key) and the store's traits, once per problem and slot, and the device's stored bandwidth once
  // per slot unless eval.bandwidth_gbps set one. `store` may be none: then only given baselines.
  Result<void> prime(results::Store* store, harness::Evaluator& evaluator, const std::string& slot,
                     const CacheKeys& keys);
  // Baselines timed elsewhere, for prime() to give under their keys.
  void give(const std::vector<SharedBaseline>& baselines);
  // Keeps the baseline `evaluation` timed (not one it was given) until taken, as the store keeps it.
  void keep_measured(const CacheKeys& keys, const Evaluation& evaluation);
  // The baselines kept since the last call.
  std::vector<SharedBaseline> take_measured();

 private:
  std::set<std::string> looked_up_;       // "<problem hash>@<slot>", "bandwidth@<slot>"
  std::map<std::string, Timing> given_;   // by the key's JSON
  std::vector<SharedBaseline> measured_;  // since take_measured()
};

// Stores the baseline, traits and bandwidth `evaluation` measured (not those it was given).
// Callers hold the store's lock.
Result<void> store_measured(results::Store& store, const CacheKeys& keys, const Evaluation& evaluation);

}  // namespace dicebench::run
