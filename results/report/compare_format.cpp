// Terminal and JSON rendering of a comparison of two runs.
#include "results/report/compare_format.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "results/report/text_table.hpp"

namespace dicebench::results {
namespace {

constexpr std::string_view kNoData = "\u2013";

bool is_rate(const std::string& metric) {
  return metric != "problems" && metric != "samples" && metric != "pending" && metric != "geomean_speedup";
}

nlohmann::json optional_number(std::optional<double> value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string_view test_name(NoiseTest test) {
  switch (test) {
    case NoiseTest::none:
      return "none";
    case NoiseTest::mcnemar:
      return "mcnemar";
    case NoiseTest::bootstrap:
      return "bootstrap";
  }
  return "none";
}

std::string test_text(const MetricComparison& m, double confidence) {
  if (m.test == NoiseTest::mcnemar) return fmt::format("McNemar p={:.3g} (+{}/-{})", *m.p_value, m.gained, m.lost);
  if (m.test == NoiseTest::bootstrap) {
    if (!m.interval) return "bootstrap: no data";
    return fmt::format("{:g}% CI [{}, {}]", confidence * 100, format_metric_delta(m.metric, m.interval->low),
                       format_metric_delta(m.metric, m.interval->high));
  }
  return "";
}

std::string run_line(const char* side, const RunRow& run) {
  return fmt::format("{} run {}: {}, created {}, git {}\n", side, run.id, run.model, run.created, run.git_sha);
}

nlohmann::json run_json(const RunRow& run) {
  return {
      {"id", run.id}, {"model", run.model}, {"suite", run.suite}, {"created", run.created}, {"git_sha", run.git_sha}};
}

std::string margin_text(std::optional<double> margin) {
  return margin ? fmt::format("{:.3g}", *margin) : std::string(kNoData);
}

std::string flip_line(const Flip& f) {
  std::string out = fmt::format("  problem {} {} (level {}) sample {}: {}", f.problem_id, f.problem, f.level,
                                f.sample_index, flip_kind_name(f.kind));
  if (f.kind == FlipKind::became_slower || f.kind == FlipKind::became_faster) {
    return out + fmt::format(" ({:.4g} ms -> {:.4g} ms)\n", f.runtime_a_ms.value_or(0), f.runtime_b_ms.value_or(0));
  }
  out += fmt::format(" ({} -> {})", f.verdict_a, f.verdict_b);
  if (f.borderline) out += fmt::format(", margin {} -> {}", margin_text(f.margin_a), margin_text(f.margin_b));
  return out + "\n";
}

nlohmann::json level_json(const LevelComparison& level) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricComparison& m : level.metrics) {
    nlohmann::json j = {{"metric", m.metric},
                        {"a", optional_number(m.a)},
                        {"b", optional_number(m.b)},
                        {"delta", optional_number(m.delta)},
                        {"test", std::string(test_name(m.test))},
                        {"beyond_noise", m.beyond_noise}};
    if (m.test == NoiseTest::mcnemar) {
      j["p_value"] = *m.p_value;
      j["gained"] = m.gained;
      j["lost"] = m.lost;
    }
    if (m.test == NoiseTest::bootstrap) {
      j["interval"] = m.interval ? nlohmann::json::array({m.interval->low, m.interval->high}) : nlohmann::json(nullptr);
    }
    metrics.push_back(std::move(j));
  }
  return {{"level", level.level ? nlohmann::json(*level.level) : nlohmann::json(nullptr)},
          {"paired_samples", level.paired_samples},
          {"paired_problems", level.paired_problems},
          {"metrics", std::move(metrics)}};
}

}  // namespace

std::string format_metric_value(const std::string& metric, std::optional<double> value) {
  if (!value) return std::string(kNoData);
  if (metric == "geomean_speedup") return fmt::format("{:.3f}x", *value);
  if (is_rate(metric)) return fmt::format("{:.1f}%", *value * 100.0);
  return fmt::format("{:.0f}", *value);
}

std::string format_metric_delta(const std::string& metric, std::optional<double> delta) {
  if (!delta) return std::string(kNoData);
  if (metric == "geomean_speedup") return fmt::format("{:+.3f}x", *delta);
  if (is_rate(metric)) return fmt::format("{:+.1f}pp", *delta * 100.0);
  return fmt::format("{:+.0f}", *delta);
}

std::string format_comparison(const Comparison& c) {
  std::string out = fmt::format("suite {}\n", c.a.suite);
  out += run_line("A", c.a);
  out += run_line("B", c.b);
  auto add_level = [&](const LevelComparison& level) {
    out += fmt::format("\n{}: {} problems and {} samples paired\n",
                       level.level ? fmt::format("level {}", *level.level) : "all levels", level.paired_problems,
                       level.paired_samples);
    TextTable table;
    table.header = {"metric", "A", "B", "delta", "noise test", "beyond noise"};
    table.right_aligned = {false, true, true, true, false, false};
    for (const MetricComparison& m : level.metrics) {
      table.rows.push_back({m.metric, format_metric_value(m.metric, m.a), format_metric_value(m.metric, m.b),
                            format_metric_delta(m.metric, m.delta), test_text(m, c.options.bootstrap.confidence),
                            m.beyond_noise ? "yes" : ""});
    }
    out += render_text_table(table);
  };
  for (const LevelComparison& level : c.levels) add_level(level);
  if (c.levels.size() != 1) add_level(c.total);
  std::vector<const Flip*> flips, borderline;
  for (const Flip& f : c.flips) (f.borderline ? borderline : flips).push_back(&f);
  out += fmt::format(
      "\nflipped ({}; slower or faster: beyond both p10-p90 spreads and by more than {:g}% of A's median):\n",
      flips.size(), c.options.min_change * 100);
  for (const Flip* f : flips) out += flip_line(*f);
  if (!borderline.empty()) {
    out += fmt::format(
        "borderline flips ({}; margin within [{:g}, {:g}] in A or B, so new inputs may flip them back: noise):\n",
        borderline.size(), kBorderlineMarginLow, kBorderlineMarginHigh);
    for (const Flip* f : borderline) out += flip_line(*f);
  }
  return out;
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelComparison& level : c.levels) levels.push_back(level_json(level));
  nlohmann::json flips = nlohmann::json::array();
  for (const Flip& f : c.flips) {
    flips.push_back({{"kind", std::string(flip_kind_name(f.kind))},
                     {"problem_id", f.problem_id},
                     {"level", f.level},
                     {"problem", f.problem},
                     {"sample_index", f.sample_index},
                     {"verdict_a", f.verdict_a},
                     {"verdict_b", f.verdict_b},
                     {"runtime_a_ms", optional_number(f.runtime_a_ms)},
                     {"runtime_b_ms", optional_number(f.runtime_b_ms)},
                     {"margin_a", optional_number(f.margin_a)},
                     {"margin_b", optional_number(f.margin_b)},
                     {"borderline", f.borderline}});
  }
  return {{"a", run_json(c.a)},
          {"b", run_json(c.b)},
          {"alpha", c.options.alpha},
          {"min_change", c.options.min_change},
          {"bootstrap",
           {{"resamples", c.options.bootstrap.resamples},
            {"confidence", c.options.bootstrap.confidence},
            {"seed", c.options.bootstrap.seed}}},
          {"levels", std::move(levels)},
          {"total", level_json(c.total)},
          {"flips", std::move(flips)}};
}

}  // namespace dicebench::results
