// The HTML report's pieces: scales and ticks of the SVG plots, the fast_p curve against the
// report's fast_p, escaping of candidate sources, the data attributes tests read, and traits,
// flags and the figures with and without degenerate problems.
#include <doctest/doctest.h>

#include "planned_run.hpp"
#include "results/report/html_report.hpp"
#include "results/report/report.hpp"
#include "results/report/svg_plot.hpp"

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

TEST_CASE("plot scales map linearly or by log10 and clamp, and log ticks step 1-2-5") {
  const Scale linear{0, 4, false};
  CHECK(linear.unit(1) == 0.25);
  CHECK(linear.unit(-3) == 0.0);
  const Scale log{0.1, 10, true};
  CHECK(log.unit(1) == doctest::Approx(0.5));
  CHECK(log.unit(100) == 1.0);
  CHECK(log_ticks(0.1, 10) == std::vector<double>{0.1, 0.2, 0.5, 1, 2, 5, 10});
  CHECK(html_escape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

TEST_CASE("the page's fast_p curve equals the report's fast_p and its figures carry exact values") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const auto run = planned_run(store,
                               {{1, 0, Verdict::correct, 2.5},
                                {2, 0, Verdict::correct, 0.7},
                                {3, 0, Verdict::compile_failed},
                                {4, 0, std::nullopt}},
                               level_problems(4));
  HtmlRun html{require_ok(load_run_results(store, run, {.sources = true})), {}};
  const RunReport report = compute_report(html.results);
  for (const FastP& entry : report.total.fast_p) CHECK(fast_p_at(html.results, entry.p) == entry.value);
  CHECK(*fast_p_at(html.results, 1.0) == doctest::Approx(1.0 / 3.0));  // 3 decided, one above 1x

  html.results.samples[0].candidate = "x = '<script>'";
  html.kernels[html.results.samples[0].sample] = {
      KernelTime{"add_kernel<float>", "kernel", true, 1, 0.01, "4,1,1", "256,1,1"}};
  const std::string page = render_html_report({html});
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("x = &#39;&lt;script&gt;&#39;") != std::string::npos);
  CHECK(page.find("add_kernel&lt;float&gt;") != std::string::npos);
  CHECK(page.find(
            R"(data-run="0" data-level="total" data-metric="correct_rate" data-value="0.6666666666666666">66.7%)") !=
        std::string::npos);
  CHECK(page.find(R"(class="fast-p-marker" data-run="0" data-p="2" data-value="0.3333333333333333")") !=
        std::string::npos);
  // No address but the SVG namespace: nothing to fetch.
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = page.find(needle); at != std::string::npos; at = page.find(needle, at + 1)) ++n;
    return n;
  };
  CHECK(count("http") == count("http://www.w3.org/2000/svg"));
  CHECK(count("http://www.w3.org/2000/svg") == 2);  // the fast_p curve and one speedup plot
}

TEST_CASE("the page shows traits, flags and the figures with and without degenerate problems") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  // 1: correct 4x, degenerate; 2: correct 2x, borderline; 3: correct 3x below the memory floor.
  const auto run = planned_run(
      store,
      {{1, 0, Verdict::correct, 4.0},
       {2, 0, Verdict::correct, 2.0, 0.05, 0.9, {{EvaluationFlag::borderline, "margin 0.9"}}},
       {3, 0, Verdict::correct, 3.0, 0.05, 0.01, {{EvaluationFlag::below_memory_floor, "0.33 ms < 0.4 ms"}}}},
      level_problems(3));
  set_traits(store, run, {{1, R"(["zeros_pass"])"}, {2, "[]"}, {3, "[]"}});
  HtmlRun html{require_ok(load_run_results(store, run, {.sources = true})), {}};
  CHECK(*fast_p_at(html.results, 1.0) == doctest::Approx(2.0 / 3.0));  // problem 3 is below the floor
  CHECK(*fast_p_at(html.results, 1.0, {.exclude_degenerate = true}) == doctest::Approx(0.5));

  const std::string page = render_html_report({html});
  CHECK(
      page.find(
          R"(<td data-traits="zeros_pass"><span class="trait" title="an all-zero output passes the tolerance">zeros_pass</span></td>)") !=
      std::string::npos);
  CHECK(page.find(R"(<td data-traits="">none</td>)") != std::string::npos);
  CHECK(page.find(R"(data-flags="borderline" data-margin="0.9")") != std::string::npos);
  CHECK(page.find(R"(<span class="flag flag-borderline" title="margin 0.9">borderline</span>)") != std::string::npos);
  CHECK(page.find(
            R"(<span class="flag flag-below_memory_floor" title="0.33 ms &lt; 0.4 ms">below_memory_floor</span>)") !=
        std::string::npos);
  CHECK(page.find(R"(data-run="0" data-set="all_problems" data-metric="fast_1" data-value="0.6666666666666666")") !=
        std::string::npos);
  CHECK(page.find(R"(data-run="0" data-set="non_degenerate" data-metric="fast_1" data-value="0.5")") !=
        std::string::npos);
  CHECK(page.find(R"(data-run="0" data-set="non_degenerate" data-metric="problems" data-value="2")") !=
        std::string::npos);
  CHECK(page.find("1 of 3 problems degenerate (zeros_pass 1)") != std::string::npos);
  CHECK(page.find(R"(data-run="0" data-flag="borderline" data-value="1")") != std::string::npos);
  CHECK(page.find(R"(data-run="0" data-flag="below_memory_floor" data-value="1")") != std::string::npos);
  CHECK(page.find(R"(data-run="0" data-flag="fastpath_disagreement" data-value="0")") != std::string::npos);
  CHECK(page.find("--exclude-degenerate") == std::string::npos);
  CHECK(page.find(R"(data-run="0" data-level="total" data-metric="fast_1" data-value="0.6666666666666666")") !=
        std::string::npos);

  const std::string excluded = render_html_report({html}, {.exclude_degenerate = true});
  CHECK(excluded.find(R"(<p id="exclude-degenerate">)") != std::string::npos);
  CHECK(excluded.find(R"(data-run="0" data-level="total" data-metric="fast_1" data-value="0.5")") != std::string::npos);
  CHECK(excluded.find(R"(class="fast-p-marker" data-run="0" data-p="1" data-value="0.5")") != std::string::npos);
}

TEST_CASE("kernel infilling's exact match and edit distance get columns where a run measured middles, and only there") {
  TempDir dir;
  Store store = open_store(dir.file("r.db"));
  const auto infill = planned_infill_run(store);
  const std::string page = render_html_report({HtmlRun{require_ok(load_run_results(store, infill)), {}}});
  CHECK(page.find("<th>middle exact match</th>") != std::string::npos);
  CHECK(page.find(R"(data-level="total" data-metric="infill_exact_rate" data-value="0.5">50.0%)") != std::string::npos);
  CHECK(page.find(R"(data-level="total" data-metric="infill_mean_edit_distance" data-value="4.5">4.5)") !=
        std::string::npos);

  const auto plain = planned_run(store, {{1, 0, Verdict::correct, 2.0}}, level_problems(1));
  CHECK(render_html_report({HtmlRun{require_ok(load_run_results(store, plain)), {}}}).find("middle exact match") ==
        std::string::npos);
}
