// Evaluating gate rules on a comparison.
#include "results/report/gate.hpp"

#include <fmt/format.h>

#include "results/report/compare_format.hpp"

namespace dicebench::results {
namespace {

// Slack for comparing drops with bounds given in decimal (0.1 is not exact in binary).
constexpr double kSlack = 1e-12;

const LevelComparison* level_of(const Comparison& c, std::optional<int> level) {
  if (!level) return &c.total;
  for (const LevelComparison& l : c.levels)
    if (l.level == level) return &l;
  return nullptr;
}

std::string bound_text(const GateRule& rule, const MetricComparison* m) {
  std::vector<std::string> parts;
  if (rule.noise) {
    std::string noise = "noise";
    if (m && m->test == NoiseTest::mcnemar) noise += fmt::format(" (McNemar p={:.3g})", *m->p_value);
    if (m && m->test == NoiseTest::bootstrap && m->interval) {
      noise += fmt::format(" (CI {} .. {})", format_metric_delta(rule.metric, m->interval->low),
                           format_metric_delta(rule.metric, m->interval->high));
    }
    parts.push_back(noise);
  }
  if (rule.max_drop) {
    parts.push_back("max drop " + format_metric_delta(rule.metric, *rule.max_drop).substr(1));  // without the sign
  }
  if (rule.max_relative_drop) parts.push_back(fmt::format("max drop {:g}%", *rule.max_relative_drop * 100));
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

RuleOutcome check_rule(const Comparison& c, const GateRule& rule) {
  RuleOutcome out;
  out.name = rule.metric + (rule.level ? fmt::format(" level {}", *rule.level) : "");
  out.metric = rule.metric;
  out.origin = rule.origin;
  if (rule.suite && *rule.suite != c.a.suite) {
    out.bound = bound_text(rule, nullptr);
    out.status = RuleStatus::skipped;
    out.message = fmt::format("for suite {}, not {}", *rule.suite, c.a.suite);
    return out;
  }
  const LevelComparison* level = level_of(c, rule.level);
  const MetricComparison* m = level ? level->find(rule.metric) : nullptr;
  out.bound = bound_text(rule, m);
  if (!level) {
    out.status = RuleStatus::skipped;
    out.message = fmt::format("neither run has level {}", *rule.level);
    return out;
  }
  if (m) {
    out.baseline = m->a;
    out.candidate = m->b;
    out.delta = m->delta;
  }
  if (!out.baseline) {
    out.status = RuleStatus::skipped;
    out.message = "the baseline has no value";
    return out;
  }
  if (!out.candidate) {
    out.status = RuleStatus::failed;
    out.message = "the candidate has no value";
    return out;
  }
  const double drop = *out.baseline - *out.candidate;
  std::vector<std::string> why;
  if (rule.noise && drop > 0 && m->beyond_noise) why.push_back("dropped beyond noise");
  if (rule.max_drop && drop > *rule.max_drop + kSlack) {
    why.push_back(fmt::format("dropped by {}", format_metric_delta(rule.metric, drop).substr(1)));
  }
  if (rule.max_relative_drop && *out.baseline > 0 && drop / *out.baseline > *rule.max_relative_drop + kSlack) {
    why.push_back(fmt::format("dropped by {:.3g}% of the baseline", drop / *out.baseline * 100));
  }
  if (!why.empty()) {
    out.status = RuleStatus::failed;
    for (const std::string& reason : why) out.message += (out.message.empty() ? "" : "; ") + reason;
  }
  return out;
}

}  // namespace

std::string_view rule_status_name(RuleStatus status) {
  switch (status) {
    case RuleStatus::passed:
      return "pass";
    case RuleStatus::failed:
      return "FAIL";
    case RuleStatus::skipped:
      return "skip";
  }
  return "?";
}

GateResult check_gate(const Comparison& c, const GateRules& rules) {
  GateResult result;
  result.baseline = c.a;
  result.candidate = c.b;
  for (const GateRule& rule : rules.rules) result.outcomes.push_back(check_rule(c, rule));

  RuleOutcome flips;
  flips.name = "no correct problem becomes incorrect";
  flips.origin = "[flips]";
  std::int64_t allowed = 0;
  // "2/5" where the runs cover several levels, else the id.
  auto problem_name = [&](const Flip& flip) {
    return c.levels.size() > 1 ? problem_key_text({flip.level, flip.problem_id}) : std::to_string(flip.problem_id);
  };
  for (const Flip& flip : c.flips) {
    if (flip.kind != FlipKind::became_incorrect) continue;
    if (rules.allows_incorrect({flip.level, flip.problem_id}) || !rules.fail_on_new_incorrect) {
      ++allowed;
      continue;
    }
    if (flip.borderline && !rules.fail_on_borderline_flip) {
      result.borderline_noise.push_back(flip);
      continue;
    }
    result.new_incorrect.push_back(flip);
  }
  if (!rules.fail_on_new_incorrect) {
    flips.bound = "any";
  } else if (rules.allowed_incorrect.empty()) {
    flips.bound = "none";
  } else {
    flips.bound = "problems";
    for (const ProblemKey& key : rules.allowed_incorrect)
      flips.bound += " " + (key.level ? problem_key_text(key) : std::to_string(key.problem_id));
  }
  if (!result.new_incorrect.empty()) {
    flips.status = RuleStatus::failed;
    flips.message = fmt::format("{} became incorrect:", result.new_incorrect.size());
    for (const Flip& flip : result.new_incorrect) {
      flips.message += fmt::format(" problem {} {} sample {} ({} -> {});", problem_name(flip), flip.problem,
                                   flip.sample_index, flip.verdict_a, flip.verdict_b);
    }
    flips.message.pop_back();
  }
  if (allowed > 0)
    flips.message += fmt::format("{}{} allowed became incorrect", flips.message.empty() ? "" : "; ", allowed);
  if (!result.borderline_noise.empty()) {
    flips.message +=
        fmt::format("{}{} borderline became incorrect, counted as noise:", flips.message.empty() ? "" : "; ",
                    result.borderline_noise.size());
    for (const Flip& flip : result.borderline_noise) {
      flips.message += fmt::format(" problem {} {} sample {};", problem_name(flip), flip.problem, flip.sample_index);
    }
    flips.message.pop_back();
  }
  result.outcomes.push_back(std::move(flips));

  for (const RuleOutcome& outcome : result.outcomes)
    result.passed = result.passed && outcome.status != RuleStatus::failed;
  return result;
}

}  // namespace dicebench::results
