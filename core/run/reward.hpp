// Rewards: how a judged item's evaluation becomes a number for a trainer. The shapes, their
// parameters with defaults, what each means and where it comes from are core/spec/vocabulary.toml's
// reward_shape; this is the one place they are computed (the Python module, the reward service and
// every trainer adapter call it).
#pragma once

#include "core/base/result.hpp"
#include "core/spec/evaluation.hpp"
#include "core/spec/vocabulary.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::run {

// A shape and its parameters, each as given or its default.
struct RewardSpec {
  RewardShape shape = RewardShape::correctness;
  std::map<std::string, double, std::less<>> params;
  // The parameter `name` (one the shape declares).
  double param(std::string_view name) const;
  // {name: value} of every parameter.
  nlohmann::json params_json() const;
};

// The shape named `shape` with `given` parameters over its defaults: a bad_input error for a shape
// or a parameter the spec does not name, or a value that is not finite.
Result<RewardSpec> reward_spec(std::string_view shape, const std::map<std::string, double>& given = {});

// The reward of one evaluation before any group normalisation: 0 for a candidate with a flag of
// the zeroes_reward group, whatever its shape gives otherwise.
double reward_of(const Evaluation& evaluation, const RewardSpec& spec);

// Fills each judged judgement's reward, reward_shape and reward_params; where the shape normalises
// within groups (correctness with zscore = 1), the groups are the items of one problem, judged ones
// only, as DICE's BiC-RL normalises the responses to one task.
void apply_rewards(std::vector<Judgement>& judgements, const RewardSpec& spec);

}  // namespace dicebench::run
