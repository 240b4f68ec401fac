// `dicebench report RUN [RUN2]`: per level compiled %, correct %, fast_p, geometric-mean speedup
// and pass@k, flag counts and the figures with and without degenerate problems, as a table or
// JSON; with --html, one self-contained HTML page of one run or of two runs overlaid;
// --exclude-degenerate leaves degenerate problems out of fast_p and the geometric mean.
#include "core/cli/commands.hpp"
#include "core/cli/run_reference.hpp"
#include "results/html_report.hpp"
#include "results/report.hpp"
#include "results/report_format.hpp"
#include "results/store.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace dicebench::cli {
namespace {

// The run with sources, and the per-kernel rows of its samples where the schema has them.
Result<results::HtmlRun> load_html_run(const RunReference& reference) {
  auto store = results::Store::open(reference.database, results::OpenMode::ReadOnly);
  if (!store) return store.error();
  results::HtmlRun run;
  auto loaded = results::load_run_results(*store, reference.run, {.sources = true});
  if (!loaded) return loaded.error();
  run.results = std::move(*loaded);
  if (store->schema_version() >= 4) {
    for (const results::SampleResult& s : run.results.samples) {
      if (s.pending || !s.has_candidate) continue;
      auto kernels = store->kernels(s.sample_id);
      if (!kernels) return kernels.error();
      if (!kernels->empty()) run.kernels[s.sample_id] = std::move(*kernels);
    }
  }
  return run;
}

}  // namespace

Command add_report_command(CLI::App& parent) {
  struct Options {
    std::string run, run2, db = kDefaultDatabase, html;
    bool json = false;
    results::ReportOptions report;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("report", "Summarize a run: correctness, fast_p, speedups, pass@k per level");
  app->add_option("run", o->run, "Run id or DATABASE:RUN (see dicebench query \"select * from runs\")")->required();
  app->add_option("run2", o->run2, "A second run to overlay (with --html)");
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  app->add_flag("--json", o->json, "Print JSON instead of a table");
  app->add_option("--html", o->html, "Write a self-contained HTML report to this file");
  app->add_flag("--exclude-degenerate", o->report.exclude_degenerate,
                "Leave problems with degenerate traits (passable without computing the answer) out of fast_p and the "
                "geometric-mean speedup");
  return {app, [o]() {
            if (!o->run2.empty() && o->html.empty()) return fail("a second run needs --html (or see dicebench compare)");
            auto reference = parse_run_reference(o->run, o->db, false);
            if (!reference) return fail(reference.error().message);
            if (!o->html.empty()) {
              std::vector<results::HtmlRun> runs;
              for (const std::string& text : {o->run, o->run2}) {
                if (text.empty()) continue;
                auto ref = parse_run_reference(text, o->db, false);
                if (!ref) return fail(ref.error().message);
                auto run = load_html_run(*ref);
                if (!run) return fail(run.error().message);
                runs.push_back(std::move(*run));
              }
              if (runs.size() == 2 && runs[0].results.run.suite != runs[1].results.run.suite) {
                return fail(fmt::format("run {} is of suite {} and run {} of suite {}: only runs of one suite overlay",
                                        runs[0].results.run.id, runs[0].results.run.suite, runs[1].results.run.id,
                                        runs[1].results.run.suite));
              }
              auto written = write_output(o->html, results::render_html_report(runs, o->report));
              if (!written) return fail(written.error().message);
              fmt::print("wrote {}\n", o->html);
              return 0;
            }
            auto run = load_run(*reference);
            if (!run) return fail(run.error().message);
            const results::RunReport report = results::compute_report(*run, o->report);
            if (o->json) fmt::print("{}\n", results::report_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
            else fmt::print("{}", results::format_report(report));
            return 0;
          }};
}

}  // namespace dicebench::cli
