// Rendering a run's record, configuration, per-problem verdict counts and traits, and per-sample
// verdicts, margins and flags for `dicebench show`.
#include "results/report/run_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "results/report/text_table.hpp"
#include "results/store/run_results.hpp"
#include "results/store/store.hpp"

namespace dicebench::results {
namespace {

std::string or_dash(const std::optional<std::string>& value) { return value ? *value : std::string("\u2013"); }

// The configuration JSON pretty-printed and indented; the raw text if it does not parse.
std::string pretty_config(const std::string& text) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return "  " + text + "\n";
    std::string dumped = parsed.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out = "  ";
    for (char c : dumped) {
      out += c;
      if (c == '\n') out += "  ";
    }
    return out + "\n";
  } catch (const std::exception&) {
    return "  " + text + "\n";
  }
}

struct ProblemCounts {
  std::int64_t samples = 0;
  std::int64_t pending = 0;
  std::int64_t request_failures = 0;  // extraction_failed samples whose request failed
  std::map<std::string, std::int64_t> verdicts;
};

std::string verdict_summary(const ProblemCounts& counts) {
  std::vector<std::string> parts;
  for (Verdict verdict : kAllVerdicts) {
    const auto it = counts.verdicts.find(std::string(verdict_name(verdict)));
    if (it == counts.verdicts.end()) continue;
    parts.push_back(fmt::format("{} {}", it->first, it->second));
    if (verdict == Verdict::extraction_failed && counts.request_failures > 0)
      parts.back() += fmt::format(" ({} request failed)", counts.request_failures);
  }
  for (const auto& [name, count] : counts.verdicts) {
    if (!parse_verdict(name)) parts.push_back(fmt::format("{} {}", name, count));
  }
  if (counts.pending > 0) parts.push_back(fmt::format("pending {}", counts.pending));
  if (parts.empty()) return "\u2013";
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : ", ") + part;
  return joined;
}

// "zeros_pass, constant_output"; "none" when checked and not degenerate; "–" when never checked.
std::string traits_text(const std::optional<std::vector<std::string>>& traits) {
  if (!traits) return "\u2013";
  if (traits->empty()) return "none";
  std::string joined;
  for (const std::string& trait : *traits) joined += (joined.empty() ? "" : ", ") + trait;
  return joined;
}

// The verdict, marked when the sample is borderline: "correct BORDERLINE".
std::string verdict_text(const SampleResult& s) {
  std::string text = s.pending ? "pending" : s.verdict();
  if (!s.pending && s.request_error) text += " (request failed)";
  if (s.has_flag(EvaluationFlag::borderline)) text += " BORDERLINE";
  return text;
}

// "borderline (margin 0.93); below_memory_floor (0.012 ms, floor 0.050 ms)"
std::string flags_text(const SampleResult& s) {
  std::string joined;
  for (const SampleFlag& flag : s.flags) {
    joined += (joined.empty() ? "" : "; ") + flag.name;
    if (!flag.detail.empty()) joined += " (" + flag.detail + ")";
  }
  return joined.empty() ? "\u2013" : joined;
}

// Per sample: verdict (borderline marked), margin and flags with their details (and, for kernel
// infilling, whether the middle matched the reference exactly and its edit distance); then what
// each flag that occurs means.
std::string sample_table(const RunResults& results) {
  const bool infill = std::any_of(results.samples.begin(), results.samples.end(),
                                  [](const SampleResult& s) { return s.infill_exact_match.has_value(); });
  TextTable table;
  table.header = {"level", "problem", "sample", "verdict", "margin", "speedup"};
  table.right_aligned = {true, true, true, false, true, true};
  if (infill) {
    table.header.insert(table.header.end(), {"exact", "edit"});
    table.right_aligned.insert(table.right_aligned.end(), {false, true});
  }
  table.header.push_back("flags");
  table.right_aligned.push_back(false);
  std::set<std::string> seen;
  for (const SampleResult& s : results.samples) {
    std::vector<std::string> row = {std::to_string(s.level),
                                    std::to_string(s.problem_id),
                                    std::to_string(s.sample_index),
                                    verdict_text(s),
                                    s.margin ? fmt::format("{:.3g}", *s.margin) : std::string("\u2013"),
                                    s.speedup ? fmt::format("{:.3f}x", *s.speedup) : std::string("\u2013")};
    if (infill) {
      row.push_back(s.infill_exact_match ? (*s.infill_exact_match ? "yes" : "no") : "\u2013");
      row.push_back(s.infill_edit_distance ? std::to_string(*s.infill_edit_distance) : "\u2013");
    }
    row.push_back(flags_text(s));
    table.rows.push_back(std::move(row));
    for (const SampleFlag& flag : s.flags) seen.insert(flag.name);
  }
  std::string out = fmt::format("samples: {}\n", results.samples.size());
  out += render_text_table(table);
  for (EvaluationFlag flag : kAllEvaluationFlags) {
    if (!seen.count(std::string(flag_name(flag)))) continue;
    out += fmt::format("{}: {}\n", flag == EvaluationFlag::borderline ? "BORDERLINE" : flag_name(flag),
                       flag_description(flag));
  }
  return out;
}

// Per level and in total: problems, samples, pending, compiled and correct samples.
std::string level_table(const RunResults& results) {
  struct Counts {
    std::set<std::int64_t> problems;
    std::int64_t samples = 0, pending = 0, compiled = 0, correct = 0;
  };
  std::map<int, Counts> levels;
  for (const ProblemRow& problem : results.problems) levels[problem.level].problems.insert(problem.problem_id);
  for (const SampleResult& s : results.samples) {
    Counts& c = levels[s.level];
    ++c.samples;
    c.pending += s.pending;
    c.compiled += s.compiled;
    c.correct += s.correct;
  }
  TextTable table;
  table.header = {"level", "problems", "samples", "pending", "compiled", "correct"};
  table.right_aligned = {true, true, true, true, true, true};
  Counts total;
  std::size_t total_problems = 0;
  auto row = [&](const std::string& name, std::size_t problems, const Counts& c) {
    table.rows.push_back({name, std::to_string(problems), std::to_string(c.samples), std::to_string(c.pending),
                          std::to_string(c.compiled), std::to_string(c.correct)});
  };
  for (const auto& [level, c] : levels) {
    row(std::to_string(level), c.problems.size(), c);
    total_problems += c.problems.size();
    total.samples += c.samples;
    total.pending += c.pending;
    total.compiled += c.compiled;
    total.correct += c.correct;
  }
  row("total", total_problems, total);
  return render_text_table(table);
}

}  // namespace

Result<std::string> format_run_summary(Store& store, std::int64_t run_id) {
  auto results = load_run_results(store, run_id);
  if (!results.ok()) return results.error();
  std::map<ProblemKey, ProblemCounts> counts;
  for (const SampleResult& s : results->samples) {
    ProblemCounts& problem = counts[s.key()];
    ++problem.samples;
    if (s.pending) {
      ++problem.pending;
    } else {
      ++problem.verdicts[s.verdict()];
      if (s.request_error) ++problem.request_failures;
    }
  }
  const std::vector<ProblemRow>& problems = results->problems;
  const std::size_t total_samples = results->samples.size();

  const RunRow& r = results->run;
  std::string out;
  out += fmt::format("run {}: {} on {}, {}\n", r.id, r.model, r.suite, run_status_name(r.status));
  out += fmt::format("  created    {}\n", r.created);
  out += fmt::format("  finished   {}\n", or_dash(r.finished));
  out += fmt::format("  dicebench  {} (git {})\n", r.dicebench_version, r.git_sha);
  out += fmt::format("  host       {}\n", r.host);
  out += fmt::format("  gpu        {} (driver {}, CUDA {}, torch {})\n", or_dash(r.gpu), or_dash(r.driver_version),
                     or_dash(r.cuda_version), or_dash(r.torch_version));
  out += fmt::format("  seed       {}\n", r.seed);
  out += "config:\n";
  out += pretty_config(r.config_json);
  out += fmt::format("problems: {}, samples: {}\n", problems.size(), total_samples);
  out += level_table(*results);
  std::int64_t request_failures = 0;
  for (const SampleResult& s : results->samples) request_failures += !s.pending && s.request_error;
  if (request_failures > 0)
    out += fmt::format(
        "request failures: {} sample(s) got no completion, as their request failed (counted as "
        "extraction_failed; samples.gen_stats '$.error' says why)\n",
        request_failures);

  TextTable table;
  table.header = {"id", "level", "name", "samples", "verdicts", "traits"};
  table.right_aligned = {true, true, false, true, false, false};
  for (const ProblemRow& problem : problems) {
    const auto it = counts.find(problem.key());
    const ProblemCounts none;
    const ProblemCounts& c = it != counts.end() ? it->second : none;
    // load_run_results has checked the traits.
    const auto traits = parse_problem_traits(problem.traits_json, "");
    table.rows.push_back({std::to_string(problem.problem_id), std::to_string(problem.level),
                          truncate_to_width(problem.name, 48), std::to_string(c.samples), verdict_summary(c),
                          traits.ok() ? traits_text(*traits) : std::string("\u2013")});
  }
  out += render_text_table(table);
  if (total_samples > 0) out += sample_table(*results);
  return out;
}

}  // namespace dicebench::results
