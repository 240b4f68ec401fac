// `dicebench report RUN [RUN2] --html FILE`: one self-contained HTML page (inline CSS and a few
// lines of JS, SVG plots drawn here, nothing fetched) with the summary table, the fast_p curve,
// the speedup distribution per level and a per-problem table whose candidate source, compile log,
// error and per-kernel timings open in place. With two runs both are overlaid; single-level runs
// put together (combine_level_runs) show as one run, each of them listed. Per problem its
// degenerate traits, per sample its flags (borderline marked) and margin; a table of correct %,
// fast_1 and geomean over all problems and over the non-degenerate ones, and one of flag counts.
//
// Every figure of the summary table carries data-run (0 or 1), data-level ("total" or the level),
// data-metric (report_json's names, fast_p as "fast_<p>", pass@k as "pass@<k>") and data-value
// (the exact number), and the fast_p curve's markers data-run, data-p and data-value, so tests
// can check them against `dicebench report --json`. Problem rows carry data-level, data-problem
// and data-sample. The degenerate table's figures carry data-run,
// data-set ("all_problems" or "non_degenerate", as report_json names them), data-metric and
// data-value; flag counts data-run, data-flag and data-value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/report/report.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::results {

struct HtmlRun {
  RunResults results;                                       // with sources
  std::map<std::int64_t, std::vector<KernelTime>> kernels;  // by sample id
};

// With options.exclude_degenerate, fast_p, the geomean and the fast_p curve leave out the
// degenerate problems, and the page says so.
std::string render_html_report(const std::vector<HtmlRun>& runs, const ReportOptions& options = {});

// The fraction of decided samples that count as fast at p (counts_as_fast), over the problems the
// report's fast_p covers with `options`; the curve the page draws. None when nothing is decided.
std::optional<double> fast_p_at(const RunResults& run, double p, const ReportOptions& options = {});

}  // namespace dicebench::results
