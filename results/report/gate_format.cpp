// Terminal, JSON and JUnit XML renderings of a gate's result.
#include "results/report/gate_format.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "results/report/compare_format.hpp"
#include "results/report/text_table.hpp"

namespace dicebench::results {
namespace {

nlohmann::json optional_number(std::optional<double> value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string run_text(const RunRow& run) { return fmt::format("run {} ({}, {})", run.id, run.model, run.created); }

nlohmann::json run_json(const RunRow& run) {
  return {
      {"id", run.id}, {"model", run.model}, {"suite", run.suite}, {"created", run.created}, {"git_sha", run.git_sha}};
}

}  // namespace

std::string format_gate(const GateResult& result) {
  std::string out = fmt::format("gate: baseline {} vs candidate {}, suite {}\n", run_text(result.baseline),
                                run_text(result.candidate), result.baseline.suite);
  TextTable table;
  table.header = {"rule", "baseline", "candidate", "delta", "allowed", "result"};
  table.right_aligned = {false, true, true, true, false, false};
  for (const RuleOutcome& o : result.outcomes) {
    const std::string metric = o.metric.value_or("");
    table.rows.push_back({o.name, o.metric ? format_metric_value(metric, o.baseline) : "",
                          o.metric ? format_metric_value(metric, o.candidate) : "",
                          o.metric ? format_metric_delta(metric, o.delta) : "", o.bound,
                          std::string(rule_status_name(o.status)) + (o.message.empty() ? "" : ": " + o.message)});
  }
  out += render_text_table(table);
  std::size_t failed = 0;
  for (const RuleOutcome& o : result.outcomes) failed += o.status == RuleStatus::failed;
  out += result.passed ? "gate passed\n" : fmt::format("gate FAILED: {} of {} rules\n", failed, result.outcomes.size());
  return out;
}

nlohmann::json gate_json(const GateResult& result) {
  nlohmann::json rules = nlohmann::json::array();
  for (const RuleOutcome& o : result.outcomes) {
    rules.push_back({{"name", o.name},
                     {"metric", o.metric ? nlohmann::json(*o.metric) : nlohmann::json(nullptr)},
                     {"bound", o.bound},
                     {"baseline", optional_number(o.baseline)},
                     {"candidate", optional_number(o.candidate)},
                     {"delta", optional_number(o.delta)},
                     {"status", std::string(rule_status_name(o.status))},
                     {"message", o.message},
                     {"origin", o.origin}});
  }
  nlohmann::json incorrect = nlohmann::json::array();
  for (const Flip& f : result.new_incorrect) {
    incorrect.push_back({{"problem_id", f.problem_id},
                         {"problem", f.problem},
                         {"level", f.level},
                         {"sample_index", f.sample_index},
                         {"verdict_baseline", f.verdict_a},
                         {"verdict_candidate", f.verdict_b}});
  }
  nlohmann::json noise = nlohmann::json::array();
  for (const Flip& f : result.borderline_noise) {
    noise.push_back({{"problem_id", f.problem_id},
                     {"problem", f.problem},
                     {"level", f.level},
                     {"sample_index", f.sample_index},
                     {"verdict_baseline", f.verdict_a},
                     {"verdict_candidate", f.verdict_b},
                     {"margin_baseline", optional_number(f.margin_a)},
                     {"margin_candidate", optional_number(f.margin_b)}});
  }
  return {
      {"passed", result.passed},   {"baseline", run_json(result.baseline)}, {"candidate", run_json(result.candidate)},
      {"rules", std::move(rules)}, {"new_incorrect", std::move(incorrect)}, {"borderline_noise", std::move(noise)}};
}

std::string gate_junit(const GateResult& result) {
  std::size_t failures = 0, skipped = 0;
  for (const RuleOutcome& o : result.outcomes) {
    failures += o.status == RuleStatus::failed;
    skipped += o.status == RuleStatus::skipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"dicebench gate\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
                     result.outcomes.size(), failures, skipped);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
                     xml_escape(fmt::format("dicebench gate: {}", result.baseline.suite)), result.outcomes.size(),
                     failures, skipped);
  for (const RuleOutcome& o : result.outcomes) {
    out += fmt::format("    <testcase classname=\"dicebench.gate\" name=\"{}\"", xml_escape(o.name));
    const std::string detail =
        o.metric
            ? fmt::format("baseline {}, candidate {}, delta {}, allowed {}", format_metric_value(*o.metric, o.baseline),
                          format_metric_value(*o.metric, o.candidate), format_metric_delta(*o.metric, o.delta), o.bound)
            : fmt::format("{} (allowed: {})", o.message, o.bound);
    if (o.status == RuleStatus::passed) {
      out += "/>\n";
    } else if (o.status == RuleStatus::failed) {
      out += fmt::format(">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n", xml_escape(o.message),
                         xml_escape(detail));
    } else {
      out += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escape(o.message));
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace dicebench::results
