// Reading gate rules from TOML (one of three translation units that include toml++: see core/host/config.cpp).
#include "results/report/gate_rules.hpp"
#include "core/base/one_line.hpp"
#include "core/base/whole_file.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <charconv>

#include "core/base/text.hpp"
#include "results/report/compare.hpp"
#include "results/report/report.hpp"

namespace dicebench::results {
namespace {

std::string location(const std::string& source, const toml::source_region& where) {
  return fmt::format("{}:{}:{}", source, where.begin.line, where.begin.column);
}

std::vector<std::string> known_metrics() {
  std::vector<std::string> names = {"compiled_rate", "correct_rate", "geomean_speedup"};
  for (double p : kFastPThresholds) names.push_back(fast_p_metric(p));
  for (int k : kPassAtK) names.push_back(fmt::format("pass@{}", k));
  return names;
}

bool has_noise_test(const std::string& metric) { return metric.rfind("pass@", 0) != 0; }

Result<void> only_keys(const toml::table& table, std::initializer_list<std::string_view> keys,
                       const std::string& source, std::string_view what) {
  for (const auto& [key, node] : table) {
    if (std::find(keys.begin(), keys.end(), key.str()) != keys.end()) continue;
    std::vector<std::string> names(keys.begin(), keys.end());
    const std::string hint = did_you_mean(key.str(), names);
    return make_error(fmt::format("{}: unknown key '{}' in {}{}", location(source, key.source()),
                                  on_one_line(key.str()), what, hint.empty() ? "" : " (" + hint + ")"));
  }
  return {};
}

Result<double> non_negative_number(const toml::node& node, const std::string& source, std::string_view key) {
  std::optional<double> value;
  if (auto v = node.as_floating_point()) value = v->get();
  if (auto v = node.as_integer()) value = static_cast<double>(v->get());
  if (!value || *value < 0) {
    return make_error(fmt::format("{}: '{}' must be a number >= 0", location(source, node.source()), key));
  }
  return *value;
}

Result<GateRule> parse_rule(const toml::table& table, const std::string& source) {
  DICEBENCH_TRY(only_keys(table, {"metric", "level", "suite", "max_drop", "max_relative_drop"}, source, "[[rule]]"));
  GateRule rule;
  rule.origin = location(source, table.source());
  const auto metric = table["metric"].value<std::string>();
  if (!metric) return make_error(fmt::format("{}: a [[rule]] needs metric = \"...\"", rule.origin));
  rule.metric = *metric;
  const auto names = known_metrics();
  if (std::find(names.begin(), names.end(), rule.metric) == names.end()) {
    const std::string hint = did_you_mean(rule.metric, names);
    return make_error(fmt::format("{}: unknown metric '{}'{}", location(source, table["metric"].node()->source()),
                                  on_one_line(rule.metric),
                                  hint.empty() ? " (known: " + join(names, ", ") + ")" : " (" + hint + ")"));
  }
  if (const toml::node* level = table.get("level")) {
    if (!level->is_integer() || level->as_integer()->get() < 0) {
      return make_error(fmt::format("{}: 'level' must be a level number", location(source, level->source())));
    }
    rule.level = static_cast<int>(level->as_integer()->get());
  }
  if (const toml::node* suite = table.get("suite")) {
    if (!suite->is_string())
      return make_error(fmt::format("{}: 'suite' must be a string", location(source, suite->source())));
    rule.suite = suite->as_string()->get();
  }
  if (const toml::node* drop = table.get("max_drop")) {
    if (const auto text = drop->value<std::string>()) {
      if (*text != "noise") {
        return make_error(
            fmt::format("{}: 'max_drop' must be a number or \"noise\"", location(source, drop->source())));
      }
      if (!has_noise_test(rule.metric)) {
        return make_error(fmt::format("{}: {} has no noise test; give max_drop as a number",
                                      location(source, drop->source()), rule.metric));
      }
      rule.noise = true;
    } else {
      auto value = non_negative_number(*drop, source, "max_drop");
      if (!value) return value.error();
      rule.max_drop = *value;
    }
  }
  if (const toml::node* drop = table.get("max_relative_drop")) {
    auto value = non_negative_number(*drop, source, "max_relative_drop");
    if (!value) return value.error();
    rule.max_relative_drop = *value;
  }
  if (!rule.noise && !rule.max_drop && !rule.max_relative_drop) {
    return make_error(fmt::format("{}: a [[rule]] needs max_drop or max_relative_drop", rule.origin));
  }
  return rule;
}

Result<void> parse_flips(const toml::table& table, const std::string& source, GateRules& rules) {
  DICEBENCH_TRY(only_keys(table, {"correct_to_incorrect", "allowed", "borderline"}, source, "[flips]"));
  if (const toml::node* mode = table.get("correct_to_incorrect")) {
    const auto text = mode->value<std::string>();
    if (!text || (*text != "fail" && *text != "allow")) {
      return make_error(
          fmt::format("{}: 'correct_to_incorrect' must be \"fail\" or \"allow\"", location(source, mode->source())));
    }
    rules.fail_on_new_incorrect = *text == "fail";
  }
  if (const toml::node* borderline = table.get("borderline")) {
    const auto text = borderline->value<std::string>();
    if (!text || (*text != "noise" && *text != "fail")) {
      return make_error(
          fmt::format("{}: 'borderline' must be \"noise\" or \"fail\"", location(source, borderline->source())));
    }
    rules.fail_on_borderline_flip = *text == "fail";
  }
  if (const toml::node* allowed = table.get("allowed")) {
    const toml::array* list = allowed->as_array();
    if (!list)
      return make_error(
          fmt::format("{}: 'allowed' must be a list of problem ids", location(source, allowed->source())));
    for (const toml::node& id : *list) {
      if (id.is_integer()) {
        rules.allowed_incorrect.insert({0, id.as_integer()->get()});
        continue;
      }
      // "LEVEL/ID" names one level's problem.
      const auto text = id.value<std::string>();
      const std::size_t slash = text ? text->find('/') : std::string::npos;
      ProblemKey key;
      bool parsed = slash != std::string::npos;
      if (parsed) {
        const char* begin = text->data();
        const char* end = begin + text->size();
        const auto level = std::from_chars(begin, begin + slash, key.level);
        const auto problem = std::from_chars(begin + slash + 1, end, key.problem_id);
        parsed = level.ec == std::errc() && level.ptr == begin + slash && key.level >= 1 && problem.ec == std::errc() &&
                 problem.ptr == end && key.problem_id >= 0;
      }
      if (!parsed)
        return make_error(fmt::format("{}: 'allowed' must hold problem ids or \"LEVEL/ID\" strings such as \"2/5\"",
                                      location(source, id.source())));
      rules.allowed_incorrect.insert(key);
    }
  }
  return {};
}

}  // namespace

GateRules default_gate_rules(const std::set<int>& levels) {
  GateRules rules;
  std::vector<std::optional<int>> scopes;
  if (levels.size() > 1)
    for (const int level : levels) scopes.push_back(level);
  scopes.push_back(std::nullopt);
  for (const std::optional<int>& level : scopes) {
    for (const char* metric : {"correct_rate", "fast_1"}) {
      GateRule rule;
      rule.metric = metric;
      rule.level = level;
      rule.noise = true;
      rule.origin = "default";
      rules.rules.push_back(std::move(rule));
    }
  }
  return rules;
}

Result<GateRules> parse_gate_rules(std::string_view text, const std::string& source) {
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return make_error(fmt::format("{}: {}", location(source, e.source()), on_one_line(e.description())));
  }
  DICEBENCH_TRY(only_keys(table, {"rule", "flips"}, source, "the rules file"));
  GateRules rules;
  if (const toml::node* list = table.get("rule")) {
    const toml::array* array = list->as_array();
    if (!array || !array->is_array_of_tables()) {
      return make_error(
          fmt::format("{}: 'rule' must be a list of tables ([[rule]])", location(source, list->source())));
    }
    for (const toml::node& item : *array) {
      auto rule = parse_rule(*item.as_table(), source);
      if (!rule) return rule.error();
      rules.rules.push_back(std::move(*rule));
    }
  }
  if (const toml::node* flips = table.get("flips")) {
    if (!flips->is_table())
      return make_error(fmt::format("{}: 'flips' must be a table", location(source, flips->source())));
    DICEBENCH_TRY(parse_flips(*flips->as_table(), source, rules));
  }
  return rules;
}

Result<GateRules> read_gate_rules(const std::string& path) {
  const auto text = read_whole_file(path, "rules file");
  if (!text) return text.error();
  return parse_gate_rules(*text, path);
}

}  // namespace dicebench::results
