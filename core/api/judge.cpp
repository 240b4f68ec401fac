// dicebench::Session::judge (core/api/include/dicebench/evaluation.hpp): items as trainers have
// them (a problem's source or suite id, raw completions) through the one evaluation loop, each
// ending in exactly one Judgement with its reward; identical candidates for one problem in a call
// are judged once.
#include "core/base/sha256.hpp"
#include "core/run/evaluation_session.hpp"
#include "core/run/reward.hpp"
#include "dicebench/evaluation.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <regex>

namespace dicebench {
namespace {

// What one item becomes before the evaluation loop: a pair to judge, or its judgement already.
struct Prepared {
  Judgement judgement;
  std::optional<run::EvaluationSession::Pair> pair;
};

Judgement not_judged(Judgement judgement, ItemStatus status, std::string error) {
  judgement.status = status;
  judgement.error = std::move(error);
  return judgement;
}

ItemStatus status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::problem_failed:
    case ErrorKind::bad_input:
      return ItemStatus::problem_failed;
    case ErrorKind::cancelled:
      return ItemStatus::cancelled;
    default:
      return ItemStatus::harness_failed;
  }
}

// The suite's problem an id such as "kernelbench/level2/40" names: nullopt for text that is no id
// (a problem's source); an error for an id the session's suite does not have.
using NamedProblem = std::optional<std::pair<ProblemKey, const host::SuiteProblem*>>;
Result<NamedProblem> problem_of_id(const run::EvaluationSession& session, const std::string& problem) {
  static const std::regex id(R"(([A-Za-z0-9_.-]+)/level([0-9]{1,3})/([0-9]{1,9}))");
  std::smatch match;
  if (!std::regex_match(problem, match, id)) return NamedProblem{};
  const host::SuiteSession* suite = session.suite();
  const std::string family = match[1].str();
  if (!suite || (suite->name() != family && !suite->name().starts_with(family + "-")))
    return make_error(ErrorKind::bad_input,
                      fmt::format("{} names a problem of {}, and this session has {}: open it with suite={}", problem,
                                  family, suite ? "suite " + suite->name() : "no suite", family));
  const ProblemKey key{std::stoi(match[2].str()), std::stoll(match[3].str())};
  const auto index = suite->index_of(key);
  if (!index)
    return make_error(ErrorKind::bad_input, fmt::format("suite {} has no problem {}", suite->name(), problem));
  return NamedProblem(std::pair(key, &suite->problems()[*index]));
}

Prepared prepare(const run::EvaluationSession& session, const Session::Item& item) {
  Prepared out;
  Judgement& j = out.judgement;
  j.id = item.id;
  if (item.completion) j.completion = item.candidate;
  auto named = problem_of_id(session, item.problem);
  if (!named) return {not_judged(std::move(j), ItemStatus::problem_failed, named.error().message), std::nullopt};
  run::EvaluationSession::Pair pair;
  std::optional<size_t> index;
  if (*named) {
    j.problem = item.problem;
    pair.problem_source = (*named)->second->source;
    pair.problem = (*named)->first;
    index = session.suite()->index_of((*named)->first);
  } else {
    if (item.problem.find_first_not_of(" \t\r\n") == std::string::npos)
      return {not_judged(std::move(j), ItemStatus::problem_failed, "the problem is empty"), std::nullopt};
    j.problem = "sha256:" + sha256_hex(item.problem);
    pair.problem_source = item.problem;
  }
  if (!item.completion) {
    j.candidate = pair.candidate_source = item.candidate;
  } else {
    auto extracted = session.suite()->extract(index, item.candidate);
    if (!extracted)
      return {not_judged(std::move(j),
                         extracted.error().kind == ErrorKind::bad_input ? ItemStatus::problem_failed
                                                                        : ItemStatus::harness_failed,
                         extracted.error().message),
              std::nullopt};
    if (!extracted->candidate) {  // a verdict, as `run` gives it: nothing ran
      j.evaluation = run::extraction_failed_evaluation(session.settings().device);
      return out;
    }
    j.candidate = pair.candidate_source = std::move(*extracted->candidate);
  }
  out.pair = std::move(pair);
  return out;
}

}  // namespace

Result<void> Session::judge(const std::vector<Item>& items, const std::optional<Reward>& reward,
                            const OnJudgement& on_judgement, const std::function<bool()>& stopping) {
  if (session_->closed()) return make_error(ErrorKind::bad_input, "this evaluation session is closed");
  std::optional<run::RewardSpec> spec;
  if (reward) {
    auto parsed = run::reward_spec(reward->shape, reward->params);
    if (!parsed) return parsed.error();
    spec = std::move(*parsed);
    if (in_group(spec->shape, kTimedRewardShapes) && !session_->settings().timing)
      return make_error(ErrorKind::bad_input, fmt::format("the reward shape {} needs the speedup, and this session "
                                                          "does not time candidates (eval.timing=off)",
                                                          reward->shape));
  }
  for (const auto& item : items)
    if (item.completion && !session_->suite())
      return make_error(ErrorKind::bad_input,
                        "raw completions need a suite to extract their code: open the session with a suite "
                        "(suite=kernelbench, kernelbench-l2, ...)");
  std::vector<Prepared> prepared;
  prepared.reserve(items.size());
  for (const auto& item : items) prepared.push_back(prepare(*session_, item));
  std::mutex calls;  // on_judgement is called from one thread at a time
  const auto finish = [&](size_t index, Judgement judgement) {
    if (spec && judgement.status == ItemStatus::judged && judgement.evaluation) {
      judgement.reward = run::reward_of(*judgement.evaluation, *spec);
      judgement.reward_shape = std::string(reward_shape_name(spec->shape));
      judgement.reward_params = spec->params_json();
    }
    std::lock_guard guard(calls);
    on_judgement(index, std::move(judgement));
  };
  // The same candidate for the same problem (a group's identical responses) is judged once, and
  // every item of it gets that evaluation.
  std::vector<run::EvaluationSession::Pair> pairs;
  std::vector<std::vector<size_t>> items_of_pair;
  std::map<std::string, size_t> pair_of_content;
  for (size_t i = 0; i < prepared.size(); ++i) {
    if (!prepared[i].pair) {
      finish(i, std::move(prepared[i].judgement));
      continue;
    }
    const auto& pair = *prepared[i].pair;
    const std::string content = (pair.problem ? problem_key_text(*pair.problem) : std::string()) + '\0' +
                                sha256_hex(pair.problem_source) + '\0' + sha256_hex(pair.candidate_source);
    const auto [found, added] = pair_of_content.emplace(content, pairs.size());
    if (added) {
      pairs.push_back(std::move(*prepared[i].pair));
      items_of_pair.emplace_back();
    }
    items_of_pair[found->second].push_back(i);
  }
  session_->evaluate(
      pairs,
      [&](size_t index, Result<Evaluation> result) {
        for (const size_t item : items_of_pair[index]) {
          Judgement judgement = std::move(prepared[item].judgement);
          if (result)
            judgement.evaluation = *result;
          else
            judgement = not_judged(std::move(judgement), status_of(result.error().kind), result.error().message);
          finish(item, std::move(judgement));
        }
      },
      stopping);
  return {};
}

Result<std::vector<Judgement>> Session::judge(const std::vector<Item>& items, const std::optional<Reward>& reward) {
  std::vector<Judgement> out(items.size());
  DICEBENCH_TRY(judge(items, reward, [&](size_t index, Judgement judgement) { out[index] = std::move(judgement); }));
  if (reward) DICEBENCH_TRY(apply_reward(out, *reward));
  return out;
}

Result<void> apply_reward(std::vector<Judgement>& judgements, const Session::Reward& reward) {
  auto spec = run::reward_spec(reward.shape, reward.params);
  if (!spec) return spec.error();
  run::apply_rewards(judgements, *spec);
  return {};
}

}  // namespace dicebench
