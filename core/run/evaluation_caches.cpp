// Looking up and storing the baselines, traits and bandwidths evaluations share.
#include "core/run/evaluation_caches.hpp"

#include "core/run/evaluation_row.hpp"
#include "results/bandwidth_cache.hpp"

#include <nlohmann/json.hpp>

namespace dicebench::run {
namespace {

harness::Timing timing_of(const results::Baseline& b) {
  return {b.median_ms, b.mean_ms, b.std_ms, b.min_ms, b.max_ms, b.p10_ms, b.p90_ms, b.trials};
}

results::Baseline baseline_of(const results::BaselineKey& key, const harness::Timing& t) {
  results::Baseline b;
  b.key = key;
  b.median_ms = t.median_ms;
  b.mean_ms = t.mean_ms;
  b.std_ms = t.std_ms;
  b.min_ms = t.min_ms;
  b.max_ms = t.max_ms;
  b.p10_ms = t.p10_ms;
  b.p90_ms = t.p90_ms;
  b.trials = t.trials;
  return b;
}

}  // namespace

Result<CacheKeys> cache_keys(harness::Evaluator& evaluator, const std::string& problem_hash) {
  auto info = evaluator.reference_info();
  if (!info) return info.error();
  const auto& settings = evaluator.settings();
  results::BaselineKey baseline{problem_hash, info->value("device_name", "unknown"), info->value("torch", "unknown"),
                                settings.baseline_method + "/" + info->value("timer", "unknown") + "/" + harness::kTimingInputs};
  results::TraitKey traits{problem_hash, baseline.device_name, settings.tolerance};
  return CacheKeys{std::move(baseline), std::move(traits)};
}

Result<void> EvaluationCaches::prime(results::Store& store, harness::Evaluator& evaluator, const std::string& slot,
                                     const CacheKeys& keys) {
  const std::string& problem_hash = keys.baseline.problem_hash;
  if (looked_up_.insert(problem_hash + "@" + slot).second) {
    auto cached = results::find_baseline(store, keys.baseline);
    if (!cached) return cached.error();
    if (*cached) evaluator.set_baseline(problem_hash, timing_of(**cached));
    auto traits = results::find_traits(store, keys.traits);
    if (!traits) return traits.error();
    if (*traits)
      evaluator.set_traits(problem_hash, {nlohmann::json::parse((*traits)->traits_json), nlohmann::json::parse((*traits)->details_json)});
  }
  if (looked_up_.insert("bandwidth@" + slot).second && evaluator.settings().bandwidth <= 0) {
    auto bandwidth = results::find_bandwidth(store, keys.baseline.device_name);
    if (!bandwidth) return bandwidth.error();
    if (*bandwidth) evaluator.set_bandwidth({(*bandwidth)->bytes_per_second, (*bandwidth)->method});
  }
  return {};
}

Result<void> store_measured(results::Store& store, const CacheKeys& keys, const harness::Evaluation& evaluation) {
  if (evaluation.baseline_measured && evaluation.baseline)
    DICEBENCH_TRY(results::put_baseline(store, baseline_of(keys.baseline, *evaluation.baseline)));
  if (const auto& t = evaluation.traits_measured)
    DICEBENCH_TRY(results::put_traits(store, {keys.traits, stored_json(t->traits), stored_json(t->details), ""}));
  if (const auto& b = evaluation.bandwidth_measured)
    DICEBENCH_TRY(results::put_bandwidth(store, {keys.baseline.device_name, b->method, b->bytes_per_second, ""}));
  return {};
}

}  // namespace dicebench::run
