// Looking up and storing the baselines, traits and bandwidths evaluations share.
#include "core/run/evaluation_caches.hpp"

#include "results/store/bandwidth_cache.hpp"

#include <optional>
#include <utility>

namespace dicebench::run {

Result<CacheKeys> cache_keys(harness::Evaluator& evaluator, const std::string& problem_hash) {
  auto info = evaluator.reference_info();
  if (!info) return info.error();
  const auto& settings = evaluator.settings();
  results::BaselineKey baseline{problem_hash, info->value("device_name", "unknown"), info->value("torch", "unknown"),
                                std::string(baseline_method_name(settings.baseline_method)) + "/" +
                                    info->value("timer", "unknown") + "/" + harness::kTimingInputs};
  results::TraitKey traits{problem_hash, baseline.device_name, std::string(tolerance_mode_name(settings.tolerance))};
  return CacheKeys{std::move(baseline), std::move(traits)};
}

namespace {

std::string key_text(const results::BaselineKey& key) { return nlohmann::json(key).dump(); }

}  // namespace

Result<void> EvaluationCaches::prime(results::Store* store, harness::Evaluator& evaluator, const std::string& slot,
                                     const CacheKeys& keys) {
  const std::string& problem_hash = keys.baseline.problem_hash;
  if (looked_up_.insert(problem_hash + "@" + slot).second) {
    std::optional<Timing> baseline;
    if (store) {
      auto cached = results::find_baseline(*store, keys.baseline);
      if (!cached) return cached.error();
      baseline = std::move(*cached);
    }
    if (const auto given = given_.find(key_text(keys.baseline)); !baseline && given != given_.end())
      baseline = given->second;
    if (baseline) evaluator.set_baseline(problem_hash, *baseline);
    if (store) {
      auto traits = results::find_traits(*store, keys.traits);
      if (!traits) return traits.error();
      if (*traits) evaluator.set_traits(problem_hash, std::move(**traits));
    }
  }
  if (store && looked_up_.insert("bandwidth@" + slot).second && evaluator.settings().bandwidth <= 0) {
    auto bandwidth = results::find_bandwidth(*store, keys.baseline.device_name);
    if (!bandwidth) return bandwidth.error();
    if (*bandwidth) evaluator.set_bandwidth(std::move(**bandwidth));
  }
  return {};
}

void EvaluationCaches::give(const std::vector<SharedBaseline>& baselines) {
  for (const auto& shared : baselines) given_.insert_or_assign(key_text(shared.key), shared.baseline);
}

void EvaluationCaches::keep_measured(const CacheKeys& keys, const Evaluation& evaluation) {
  if (!evaluation.baseline_measured || !evaluation.baseline) return;
  Timing kept = *evaluation.baseline;  // what the baselines table keeps of it (find_baseline)
  kept.stop_reason.clear();
  kept.warm_calls = 0;
  measured_.push_back({keys.baseline, std::move(kept)});
}

std::vector<SharedBaseline> EvaluationCaches::take_measured() { return std::exchange(measured_, {}); }

Result<void> store_measured(results::Store& store, const CacheKeys& keys, const Evaluation& evaluation) {
  if (evaluation.baseline_measured && evaluation.baseline)
    DICEBENCH_TRY(results::put_baseline(store, keys.baseline, *evaluation.baseline));
  if (const auto& t = evaluation.traits_measured) DICEBENCH_TRY(results::put_traits(store, keys.traits, *t));
  if (const auto& b = evaluation.bandwidth_measured)
    DICEBENCH_TRY(results::put_bandwidth(store, keys.baseline.device_name, *b));
  return {};
}

}  // namespace dicebench::run
