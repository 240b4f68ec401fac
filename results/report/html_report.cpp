// Rendering the self-contained HTML report.
#include "results/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "results/report/report.hpp"
#include "results/report/svg_plot.hpp"

namespace dicebench::results {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728"};
constexpr std::string_view kNoData = "\u2013";

constexpr std::string_view kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; vertical-align: top; }
th { background: #f3f3f3; cursor: pointer; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict-correct { color: #1a7f37; } .verdict-bad { color: #b42318; } .pending { color: #888; }
pre { background: #f7f7f7; padding: 8px; max-width: 900px; max-height: 480px; overflow: auto; font-size: 12px; }
svg.plot { display: block; margin: 8px 0; } svg text { font-size: 11px; fill: #333; } svg text.label { font-size: 12px; }
svg .axis { stroke: #444; } svg .grid { stroke: #e4e4e4; } svg .reference { stroke: #888; stroke-dasharray: 4 3; }
.run0 { color: #1f77b4; } .run1 { color: #d62728; }
.flag, .trait { display: inline-block; margin: 1px 2px; padding: 0 5px; border-radius: 3px; font-size: 12px; background: #eee; }
.flag-borderline { background: #fff3cd; color: #7a4d00; font-weight: bold; }
.flag-below_memory_floor, .flag-output_aliases_input { background: #fde2e1; color: #b42318; }
.trait { background: #e8e0f7; color: #4b2a8a; }
)";

// Click a header to sort its table's rows by that column (numbers as numbers).
constexpr std::string_view kScript = R"(
document.querySelectorAll('table.sortable th').forEach(function (th, column) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var ascending = th.dataset.order !== 'asc';
    th.dataset.order = ascending ? 'asc' : 'desc';
    var key = function (row) {
      var cell = row.cells[column];
      var text = cell ? (cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent) : '';
      var number = parseFloat(text);
      return isNaN(number) ? text : number;
    };
    Array.from(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
    }).forEach(function (row) { body.appendChild(row); });
  });
});
)";

std::string exact(double value) { return fmt::format("{}", value); }

std::string percent(std::optional<double> rate) {
  return rate ? fmt::format("{:.1f}%", *rate * 100) : std::string(kNoData);
}

std::string run_label(const RunResults& run, std::size_t index) {
  return fmt::format("{} run {}: {}", index == 0 ? "A" : "B", run.run.id, run.run.model);
}

// "run 3", or "runs 3, 4, 5" for single-level runs put together.
std::string run_names(const RunResults& run) {
  if (run.parts.empty()) return fmt::format("run {}", run.run.id);
  std::string ids;
  for (const RunRow& part : run.parts) ids += (ids.empty() ? "" : ", ") + std::to_string(part.id);
  return "runs " + ids;
}

// The problems whose traits say they can be passed without computing the answer.
std::set<ProblemKey> degenerate_problems(const RunResults& run) {
  std::set<ProblemKey> out;
  for (const ProblemRow& problem : run.problems) {
    auto traits = parse_problem_traits(problem.traits_json, "");
    if (traits.ok() && is_degenerate(*traits)) out.insert(problem.key());
  }
  return out;
}

std::string figure_cell(std::size_t run, const LevelReport& level, const std::string& metric,
                        std::optional<double> value, const std::string& text) {
  return fmt::format(R"(<td class="num" data-run="{}" data-level="{}" data-metric="{}" data-value="{}">{}</td>)", run,
                     level.level ? std::to_string(*level.level) : "total", html_escape(metric),
                     value ? exact(*value) : "null", html_escape(text));
}

std::string summary_table(const std::vector<HtmlRun>& runs, const std::vector<RunReport>& reports) {
  std::set<int> ks;
  for (const RunReport& report : reports) {
    for (const PassAtK& entry : report.total.pass_at_k) ks.insert(entry.k);
    for (const LevelReport& level : report.levels)
      for (const PassAtK& entry : level.pass_at_k) ks.insert(entry.k);
  }
  // Kernel infilling's columns, where a run measured middles.
  const bool infill = std::any_of(reports.begin(), reports.end(),
                                  [](const RunReport& report) { return report.total.infill_samples > 0; });
  std::string out =
      R"(<table id="summary"><thead><tr><th>level</th><th>run</th><th>problems</th><th>samples</th><th>pending</th><th>compiled</th><th>correct</th>)";
  for (double p : kFastPThresholds) out += fmt::format("<th>fast_{}</th>", p);
  out += "<th>geomean speedup</th>";
  for (int k : ks) out += fmt::format("<th>pass@{}</th>", k);
  if (infill) out += "<th>middle exact match</th><th>mean edit distance (bytes)</th>";
  out += "</tr></thead><tbody>\n";
  auto row = [&](std::size_t r, const LevelReport& level) {
    out +=
        fmt::format(R"(<tr class="run{}"><td>{}</td><td>{}</td>)", r,
                    level.level ? std::to_string(*level.level) : "total", html_escape(run_label(runs[r].results, r)));
    auto count = [&](const char* metric, std::int64_t value) {
      out += figure_cell(r, level, metric, static_cast<double>(value), std::to_string(value));
    };
    count("problems", level.problems);
    count("samples", level.samples);
    count("pending", level.pending);
    out += figure_cell(r, level, "compiled_rate", level.compiled_rate, percent(level.compiled_rate));
    out += figure_cell(r, level, "correct_rate", level.correct_rate, percent(level.correct_rate));
    for (const FastP& entry : level.fast_p)
      out += figure_cell(r, level, fmt::format("fast_{}", entry.p), entry.value, percent(entry.value));
    out += figure_cell(r, level, "geomean_speedup", level.geomean_speedup,
                       level.geomean_speedup ? fmt::format("{:.3f}x", *level.geomean_speedup) : std::string(kNoData));
    for (int k : ks) {
      std::optional<double> value;
      for (const PassAtK& entry : level.pass_at_k)
        if (entry.k == k) value = entry.value;
      out += figure_cell(r, level, fmt::format("pass@{}", k), value, percent(value));
    }
    if (infill) {
      out += figure_cell(r, level, "infill_exact_rate", level.infill_exact_rate, percent(level.infill_exact_rate));
      out += figure_cell(r, level, "infill_mean_edit_distance", level.infill_mean_edit_distance,
                         level.infill_mean_edit_distance ? fmt::format("{:.1f}", *level.infill_mean_edit_distance)
                                                         : std::string(kNoData));
    }
    out += "</tr>\n";
  };
  std::set<int> levels;
  for (const RunReport& report : reports)
    for (const LevelReport& level : report.levels) levels.insert(*level.level);
  for (int level : levels) {
    for (std::size_t r = 0; r < reports.size(); ++r)
      for (const LevelReport& l : reports[r].levels)
        if (l.level == level) row(r, l);
  }
  for (std::size_t r = 0; r < reports.size(); ++r) row(r, reports[r].total);
  return out + "</tbody></table>\n";
}

std::string headline_cell(std::size_t run, const char* set, const char* metric, std::optional<double> value,
                          const std::string& text) {
  return fmt::format(R"(<td class="num" data-run="{}" data-set="{}" data-metric="{}" data-value="{}">{}</td>)", run,
                     set, metric, value ? exact(*value) : "null", html_escape(text));
}

// "2 of 5 problems degenerate (zeros_pass 2); traits not checked for 1"
std::string degenerate_text(const LevelReport& total) {
  if (total.problems > 0 && total.unchecked_problems == total.problems) return "traits not checked";
  std::string text = fmt::format("{} of {} problems degenerate", total.degenerate_problems, total.problems);
  std::string traits;
  for (const auto& [name, count] : total.traits)
    traits += fmt::format("{}{} {}", traits.empty() ? "" : ", ", name, count);
  if (!traits.empty()) text += " (" + traits + ")";
  if (total.unchecked_problems > 0) text += fmt::format("; traits not checked for {}", total.unchecked_problems);
  return text;
}

// Correct %, fast_1 and geomean over all problems and over the non-degenerate ones, per run.
std::string degenerate_table(const std::vector<HtmlRun>& runs, const std::vector<RunReport>& reports) {
  std::string out = "<ul>";
  for (std::size_t r = 0; r < reports.size(); ++r) {
    out += fmt::format(R"(<li class="run{}">{}: {}</li>)", r, html_escape(run_label(runs[r].results, r)),
                       html_escape(degenerate_text(reports[r].total)));
  }
  out += "</ul>\n";
  out +=
      R"(<table id="degenerate"><thead><tr><th>run</th><th>problems</th><th>count</th><th>correct</th><th>fast_1</th><th>geomean speedup</th></tr></thead><tbody>)";
  out += "\n";
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const LevelReport& total = reports[r].total;
    for (const auto& [set, label, figures] :
         {std::tuple<const char*, const char*, const HeadlineFigures*>{"all_problems", "all", &total.all_problems},
          std::tuple<const char*, const char*, const HeadlineFigures*>{"non_degenerate", "non-degenerate",
                                                                       &total.non_degenerate}}) {
      out += fmt::format(R"(<tr class="run{}"><td>{}</td><td>{}</td>)", r, html_escape(run_label(runs[r].results, r)),
                         label);
      out +=
          headline_cell(r, set, "problems", static_cast<double>(figures->problems), std::to_string(figures->problems));
      out += headline_cell(r, set, "correct_rate", figures->correct_rate, percent(figures->correct_rate));
      out += headline_cell(r, set, "fast_1", figures->fast_1, percent(figures->fast_1));
      out += headline_cell(
          r, set, "geomean_speedup", figures->geomean_speedup,
          figures->geomean_speedup ? fmt::format("{:.3f}x", *figures->geomean_speedup) : std::string(kNoData));
      out += "</tr>\n";
    }
  }
  return out + "</tbody></table>\n";
}

// How many evaluations carry each flag, per run, with what the flag means.
std::string flag_table(const std::vector<HtmlRun>& runs, const std::vector<RunReport>& reports) {
  std::string out = R"(<table id="flags"><thead><tr><th>flag</th><th>meaning</th>)";
  for (std::size_t r = 0; r < runs.size(); ++r) {
    out += fmt::format(R"(<th class="run{}">{}</th>)", r, html_escape(run_label(runs[r].results, r)));
  }
  out += "</tr></thead><tbody>\n";
  std::vector<std::pair<std::string, std::string>> flags;  // name, meaning
  for (EvaluationFlag flag : kAllEvaluationFlags) flags.emplace_back(flag_name(flag), flag_description(flag));
  std::set<std::string> unknown;
  for (const RunReport& report : reports)
    for (const auto& [name, count] : report.total.flags)
      if (!parse_flag(name)) unknown.insert(name);
  for (const std::string& name : unknown) flags.emplace_back(name, "");
  for (const auto& [name, meaning] : flags) {
    out += fmt::format(R"(<tr><td><span class="flag flag-{0}">{0}</span></td><td>{1}</td>)", html_escape(name),
                       html_escape(meaning));
    for (std::size_t r = 0; r < reports.size(); ++r) {
      const auto it = reports[r].total.flags.find(name);
      const std::int64_t count = it == reports[r].total.flags.end() ? 0 : it->second;
      out += fmt::format(R"(<td class="num" data-run="{}" data-flag="{}" data-value="{}">{}</td>)", r,
                         html_escape(name), count, count);
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::vector<double> correct_speedups(const RunResults& run, std::optional<int> level) {
  std::vector<double> out;
  for (const SampleResult& s : run.samples)
    if (s.correct && s.speedup && *s.speedup > 0 && std::isfinite(*s.speedup) && (!level || s.level == *level))
      out.push_back(*s.speedup);
  std::sort(out.begin(), out.end());
  return out;
}

// A log range covering the speedups and the report's thresholds, widened to powers of ten.
Scale speedup_scale(const std::vector<HtmlRun>& runs) {
  double low = 0.5, high = 2.0;
  for (const HtmlRun& run : runs) {
    for (double s : correct_speedups(run.results, std::nullopt)) {
      low = std::min(low, s);
      high = std::max(high, s);
    }
  }
  return Scale{std::pow(10.0, std::floor(std::log10(low))), std::pow(10.0, std::ceil(std::log10(high))), true};
}

std::string fast_p_plot(const std::vector<HtmlRun>& runs, const Scale& x, const ReportOptions& options) {
  SvgPlot plot("fast-p-curve", "fast_p: fraction of problems correct and faster than p", x, Scale{0, 1, false}, 760,
               360);
  plot.x_axis(log_ticks(x.min, x.max), "speedup threshold p (log scale)");
  plot.y_axis({0, 0.25, 0.5, 0.75, 1.0}, "fast_p", true);
  plot.x_reference(1.0, "1x");
  std::vector<std::pair<std::string, std::string>> legend;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const RunResults& run = runs[r].results;
    const auto first = fast_p_at(run, x.min, options);
    if (!first) continue;
    // A step down at every speedup.
    std::vector<std::pair<double, double>> points = {{x.min, *first}};
    for (double s : correct_speedups(run, std::nullopt)) {
      if (s <= x.min || s >= x.max) continue;
      points.emplace_back(s, points.back().second);
      points.emplace_back(s, *fast_p_at(run, s, options));
    }
    points.emplace_back(x.max, *fast_p_at(run, x.max, options));
    plot.polyline(points, kColors[r], fmt::format(R"(data-run="{}")", r));
    for (double p : kFastPThresholds) {
      if (p <= 0) continue;  // p = 0 has no place on a log axis; the table shows it
      const double value = *fast_p_at(run, p, options);
      plot.marker(
          p, value, kColors[r], fmt::format("fast_{} = {:.1f}%", p, value * 100),
          fmt::format(R"(class="fast-p-marker" data-run="{}" data-p="{}" data-value="{}")", r, p, exact(value)));
    }
    legend.emplace_back(run_label(run, r), kColors[r]);
  }
  plot.legend(legend);
  return plot.str();
}

std::string speedup_plot(const std::vector<HtmlRun>& runs, int level, const Scale& x) {
  SvgPlot plot(fmt::format("speedups-level-{}", level), fmt::format("speedups of correct samples, level {}", level), x,
               Scale{0, static_cast<double>(runs.size()), false}, 760, 96 + 60 * static_cast<int>(runs.size()));
  plot.x_axis(log_ticks(x.min, x.max), fmt::format("speedup, level {} (log scale)", level));
  plot.x_reference(1.0, "1x");
  std::vector<std::pair<std::string, std::string>> legend;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const auto speedups = correct_speedups(runs[r].results, level);
    // One band per run, top to bottom; a fixed jitter spreads equal values.
    const double band = static_cast<double>(runs.size() - r) - 0.5;
    for (std::size_t i = 0; i < speedups.size(); ++i) {
      const double jitter = (static_cast<double>(i % 7) - 3.0) * 0.08;
      plot.marker(speedups[i], band + jitter, kColors[r], fmt::format("{:.3f}x", speedups[i]),
                  fmt::format(R"(class="speedup" data-run="{}")", r));
    }
    legend.emplace_back(fmt::format("{} ({} correct)", run_label(runs[r].results, r), speedups.size()), kColors[r]);
  }
  plot.legend(legend);
  return plot.str();
}

std::string ms(const std::optional<double>& value) {
  return value ? fmt::format("{:.4g}", *value) : std::string(kNoData);
}

// A problem's traits as badges; "–" when never checked, "none" when checked and not degenerate.
std::string traits_cell(const ProblemRow* problem) {
  auto traits = parse_problem_traits(problem ? problem->traits_json : std::nullopt, "");
  if (!traits.ok() || !*traits) return R"(<td class="pending" data-traits="">–</td>)";
  std::string names, badges;
  for (const std::string& trait : **traits) {
    names += (names.empty() ? "" : " ") + trait;
    const auto known = parse_trait(trait);
    badges +=
        fmt::format(R"(<span class="trait" title="{}">{}</span>)",
                    html_escape(known ? std::string(trait_description(*known)) : std::string()), html_escape(trait));
  }
  if (badges.empty()) badges = "none";
  return fmt::format(R"(<td data-traits="{}">{}</td>)", html_escape(names), badges);
}

// A sample's margin and flags, each flag a badge whose title is its detail.
std::string flags_cell(const SampleResult& s) {
  std::string names, inner;
  if (s.margin) inner += fmt::format("margin {:.3g} ", *s.margin);
  for (const SampleFlag& flag : s.flags) {
    names += (names.empty() ? "" : " ") + flag.name;
    inner += fmt::format(R"(<span class="flag flag-{0}" title="{1}">{0}</span>)", html_escape(flag.name),
                         html_escape(flag.detail));
  }
  return fmt::format(R"(<td data-flags="{}" data-margin="{}" data-sort="{}">{}</td>)", html_escape(names),
                     s.margin ? exact(*s.margin) : "", s.margin ? exact(*s.margin) : "", inner);
}

std::string details_cell(const SampleResult& s, const std::vector<KernelTime>* kernels) {
  std::string inner;
  if (s.candidate) inner += "<h4>candidate</h4><pre>" + html_escape(*s.candidate) + "</pre>";
  if (s.compile_log && !s.compile_log->empty())
    inner += "<h4>compile log</h4><pre>" + html_escape(*s.compile_log) + "</pre>";
  if (s.error_message) {
    inner += "<h4>error" + (s.error_class ? " (" + html_escape(*s.error_class) + ")" : std::string()) + "</h4><pre>" +
             html_escape(*s.error_message) + "</pre>";
  }
  if (kernels && !kernels->empty()) {
    inner +=
        "<h4>device work per call</h4><table><tr><th>kernel</th><th>kind</th><th>from candidate</th><th>launches</th>"
        "<th>ms</th><th>grid</th><th>block</th></tr>";
    for (const KernelTime& k : *kernels) {
      inner += fmt::format(
          R"(<tr><td>{}</td><td>{}</td><td>{}</td><td class="num">{:g}</td><td class="num">{:.4g}</td><td>{}</td><td>{}</td></tr>)",
          html_escape(k.name), k.kind, k.from_candidate ? "yes" : "no", k.launches_per_call, k.ms_per_call,
          html_escape(k.grid), html_escape(k.block));
    }
    inner += "</table>";
  }
  if (inner.empty()) return "<td></td>";
  return "<td><details><summary>show</summary>" + inner + "</details></td>";
}

std::string problem_table(const std::vector<HtmlRun>& runs) {
  std::map<std::pair<ProblemKey, int>, std::vector<const SampleResult*>> rows;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const SampleResult& s : runs[r].results.samples) {
      auto& slot = rows[{s.key(), s.sample_index}];
      slot.resize(runs.size(), nullptr);
      slot[r] = &s;
    }
  }
  std::string out =
      R"(<table id="problems" class="sortable"><thead><tr><th>problem</th><th>name</th><th>level</th><th>sample</th><th>traits</th>)";
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const char* side = r == 0 ? "A" : "B";
    out += fmt::format(
        R"(<th class="run{0}">{1} verdict</th><th class="run{0}">{1} margin, flags</th><th class="run{0}">{1} runtime ms (p10–p90)</th><th class="run{0}">{1} baseline ms</th><th class="run{0}">{1} speedup</th><th class="run{0}">{1} custom kernels</th><th class="run{0}">{1} compile</th><th class="run{0}">{1} details</th>)",
        r, side);
  }
  out += "</tr></thead><tbody>\n";
  for (const auto& [key, samples] : rows) {
    const SampleResult* any = nullptr;
    for (const SampleResult* s : samples) any = any ? any : s;
    const ProblemRow* problem = nullptr;
    for (const HtmlRun& run : runs) problem = problem ? problem : find_problem(run.results, key.first);
    out += fmt::format(
        R"(<tr data-level="{}" data-problem="{}" data-sample="{}"><td class="num">{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td>)",
        key.first.level, key.first.problem_id, key.second, key.first.problem_id,
        html_escape(problem ? problem->name : ""), any->level, key.second);
    out += traits_cell(problem);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const SampleResult* s = samples[r];
      if (!s) {
        out +=
            "<td class=\"pending\">not in this run</td><td></td><td></td><td></td><td></td><td></td><td></td><td></td>";
        continue;
      }
      const std::string verdict = s->pending ? "pending" : s->verdict();
      const char* verdict_class = s->pending ? "pending" : s->correct ? "verdict-correct" : "verdict-bad";
      std::string runtime = ms(s->runtime_ms);
      if (s->runtime_p10_ms && s->runtime_p90_ms)
        runtime += fmt::format(" ({:.4g}–{:.4g})", *s->runtime_p10_ms, *s->runtime_p90_ms);
      out += fmt::format(R"(<td class="{}" data-verdict="{}">{}</td>)", verdict_class, html_escape(verdict),
                         html_escape(verdict));
      out += flags_cell(*s);
      out +=
          fmt::format(R"(<td class="num" data-sort="{}">{}</td>)", s->runtime_ms ? exact(*s->runtime_ms) : "", runtime);
      out += fmt::format(R"(<td class="num">{}</td>)", ms(s->baseline_ms));
      out += fmt::format(R"(<td class="num" data-sort="{}" data-speedup="{}">{}</td>)",
                         s->speedup ? exact(*s->speedup) : "", s->speedup ? exact(*s->speedup) : "",
                         s->speedup ? fmt::format("{:.3f}x", *s->speedup) : std::string(kNoData));
      out += fmt::format(R"(<td class="num">{}</td>)", percent(s->custom_kernel_share));
      out += fmt::format("<td>{}</td>", html_escape(s->compile_path.value_or(std::string(kNoData))));
      const auto kernels = runs[r].kernels.find(s->sample);
      out += details_cell(*s, kernels == runs[r].kernels.end() ? nullptr : &kernels->second);
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace

std::optional<double> fast_p_at(const RunResults& run, double p, const ReportOptions& options) {
  const std::set<ProblemKey> left_out = options.exclude_degenerate ? degenerate_problems(run) : std::set<ProblemKey>();
  std::int64_t decided = 0, fast = 0;
  for (const SampleResult& s : run.samples) {
    if (s.pending || left_out.count(s.key())) continue;
    ++decided;
    if (counts_as_fast(s, p)) ++fast;
  }
  if (decided == 0) return std::nullopt;
  return static_cast<double>(fast) / static_cast<double>(decided);
}

std::string render_html_report(const std::vector<HtmlRun>& runs, const ReportOptions& options) {
  std::vector<RunReport> reports;
  for (const HtmlRun& run : runs) reports.push_back(compute_report(run.results, options));
  std::string title = "dicebench report: " + runs[0].results.run.suite;
  for (std::size_t r = 0; r < runs.size(); ++r)
    title += fmt::format("{} {}", r == 0 ? "," : " vs", run_names(runs[r].results));

  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<link rel=\"icon\" href=\"data:,\"><title>" +
      html_escape(title) + "</title><style>" + std::string(kStyle) + "</style></head><body>\n<h1>" +
      html_escape(title) + "</h1>\n<ul>";
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const RunResults& results = runs[r].results;
    // A combined report lists each single-level run it puts together.
    const std::vector<RunRow> rows = results.parts.empty() ? std::vector<RunRow>{results.run} : results.parts;
    for (const RunRow& run : rows) {
      const std::string label =
          results.parts.empty() ? run_label(results, r) : fmt::format("run {}: {} on {}", run.id, run.model, run.suite);
      out += fmt::format(R"(<li class="run{}">{}: status {}, created {}, dicebench {} (git {}), host {}, GPU {}</li>)",
                         r, html_escape(label), run_status_name(run.status), html_escape(run.created),
                         html_escape(run.dicebench_version), html_escape(run.git_sha), html_escape(run.host),
                         html_escape(run.gpu.value_or("none")));
    }
  }
  out += "</ul>\n<h2>Summary</h2>\n";
  if (options.exclude_degenerate) {
    out +=
        "<p id=\"exclude-degenerate\">fast_p, the geometric-mean speedup and the fast_p curve leave out the degenerate "
        "problems (--exclude-degenerate).</p>\n";
  }
  out += "<p>fast_p counts a sample as fast only when it is correct and not flagged below_memory_floor.</p>\n";
  out += summary_table(runs, reports);
  out += "<h2>Degenerate problems</h2>\n<p>Problems with traits can be passed without computing their answer.</p>\n" +
         degenerate_table(runs, reports);
  out += "<h2>Flags</h2>\n" + flag_table(runs, reports);
  const Scale x = speedup_scale(runs);
  out += "<h2>fast_p</h2>\n" + fast_p_plot(runs, x, options);
  out += "<h2>Speedups of correct samples</h2>\n";
  std::set<int> levels;
  for (const RunReport& report : reports)
    for (const LevelReport& level : report.levels) levels.insert(*level.level);
  for (int level : levels) out += speedup_plot(runs, level, x);
  out += "<h2>Problems</h2>\n<p>Click a column header to sort.</p>\n" + problem_table(runs);
  out += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return out;
}

}  // namespace dicebench::results
