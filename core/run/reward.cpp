// Rewards from evaluations (reward.hpp); the shapes are core/spec/vocabulary.toml's reward_shape.
#include "core/run/reward.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace dicebench::run {

double RewardSpec::param(std::string_view name) const {
  const auto it = params.find(name);
  return it == params.end() ? 0.0 : it->second;
}

nlohmann::json RewardSpec::params_json() const {
  auto out = nlohmann::json::object();
  for (const auto& [name, value] : params) out[name] = value;
  return out;
}

Result<RewardSpec> reward_spec(std::string_view shape, const std::map<std::string, double>& given) {
  const auto parsed = parse_reward_shape(shape);
  if (!parsed) {
    std::string names;
    for (const auto name : VocabularyOf<RewardShape>::names) names += (names.empty() ? "" : ", ") + std::string(name);
    return make_error(ErrorKind::bad_input, fmt::format("no reward shape {:?}: choose one of {}", shape, names));
  }
  RewardSpec spec{*parsed, {}};
  for (const auto& param : reward_shape_params(*parsed)) spec.params.emplace(param.name, param.default_value);
  for (const auto& [name, value] : given) {
    if (!spec.params.count(name))
      return make_error(ErrorKind::bad_input, fmt::format("the reward shape {} takes no parameter {:?}", shape, name));
    if (!std::isfinite(value))
      return make_error(ErrorKind::bad_input,
                        fmt::format("the reward parameter {} must be finite, not {}", name, value));
    spec.params[name] = value;
  }
  return spec;
}

double reward_of(const Evaluation& evaluation, const RewardSpec& spec) {
  for (const auto& [flag, detail] : evaluation.flags)
    if (in_group(flag, kRewardZeroingFlags)) return 0.0;
  const bool correct = evaluation.verdict == Verdict::correct;
  const std::optional<double> speedup = correct ? evaluation.speedup : std::nullopt;
  switch (spec.shape) {
    case RewardShape::correctness:
      return correct ? 1.0 : 0.0;
    case RewardShape::speedup:
      return speedup ? std::min(*speedup, spec.param("cap")) : 0.0;
    case RewardShape::correct_plus_speedup:
      if (!correct) return 0.0;
      return spec.param("correct_weight") +
             spec.param("speedup_weight") * std::min(speedup.value_or(0.0), spec.param("cap"));
    case RewardShape::log_speedup:
      if (!correct) return spec.param("incorrect");
      if (!speedup || *speedup <= 0) return spec.param("low");
      return std::clamp(std::log(*speedup), spec.param("low"), spec.param("high"));
  }
  return 0.0;
}

void apply_rewards(std::vector<Judgement>& judgements, const RewardSpec& spec) {
  const auto params = spec.params_json();
  for (auto& judgement : judgements) {
    if (judgement.status != ItemStatus::judged || !judgement.evaluation) continue;
    judgement.reward = reward_of(*judgement.evaluation, spec);
    judgement.reward_shape = std::string(reward_shape_name(spec.shape));
    judgement.reward_params = params;
  }
  if (spec.shape != RewardShape::correctness || spec.param("zscore") == 0.0) return;
  // DICE's z-score: the population standard deviation; a group whose rewards are all equal gets 0.
  std::unordered_map<std::string, std::vector<Judgement*>> groups;
  for (auto& judgement : judgements)
    if (judgement.reward) groups[judgement.problem].push_back(&judgement);
  for (auto& [problem, members] : groups) {
    double mean = 0;
    for (const auto* member : members) mean += *member->reward;
    mean /= static_cast<double>(members.size());
    double variance = 0;
    for (const auto* member : members) variance += (*member->reward - mean) * (*member->reward - mean);
    const double std_dev = std::sqrt(variance / static_cast<double>(members.size()));
    for (auto* member : members)
      member->reward = std_dev == 0.0 ? 0.0 : (*member->reward - mean) / (std_dev + spec.param("eps"));
  }
}

}  // namespace dicebench::run
