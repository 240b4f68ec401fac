// `dicebench report RUN [RUN2] --html FILE`: one self-contained HTML page (inline CSS and a few
// lines of JS, SVG plots drawn here, nothing fetched) with the summary table, the fast_p curve,
// the speedup distribution per level and a per-problem table whose candidate source, compile log,
// error and per-kernel timings open in place. With two runs both are overlaid.
//
// Every figure of the summary table carries data-run (0 or 1), data-level ("total" or the level),
// data-metric (report_json's names, fast_p as "fast_<p>", pass@k as "pass@<k>") and data-value
// (the exact number), and the fast_p curve's markers data-run, data-p and data-value, so tests
// can check them against `dicebench report --json`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/run_results.hpp"

namespace dicebench::results {

struct HtmlRun {
  RunResults results;                                       // with sources
  std::map<std::int64_t, std::vector<KernelRow>> kernels;  // by sample id
};

std::string render_html_report(const std::vector<HtmlRun>& runs);

// The fraction of decided samples that are correct with speedup strictly above p, as the report
// defines fast_p; the curve the page draws. None when nothing is decided.
std::optional<double> fast_p_at(const RunResults& run, double p);

}  // namespace dicebench::results
