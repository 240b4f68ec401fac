// `dicebench report RUN [RUN...]`: per level and in total compiled %, correct %, fast_p,
// geometric-mean speedup and pass@k, flag counts and the figures with and without degenerate
// problems, as a table or JSON; with --baseline-file, speedups and fast_p against a published
// KernelBench baseline file rather than our measured baselines; several single-level runs of one model as one table by
// level; with
// --html, one self-contained HTML page of one run, of such runs put together, or of two runs of one
// suite overlaid; --exclude-degenerate leaves degenerate problems out of fast_p and the geometric mean.
#include "core/cli/commands.hpp"
#include "core/cli/run_reference.hpp"
#include "results/report/html_report.hpp"
#include "results/report/level_runs.hpp"
#include "results/report/published_baselines.hpp"
#include "results/report/report.hpp"
#include "results/report/report_format.hpp"
#include "results/report/time_breakdown.hpp"
#include "results/store/store.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <vector>

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
      auto kernels = store->kernels(s.sample);
      if (!kernels) return kernels.error();
      if (!kernels->empty()) run.kernels[s.sample] = std::move(*kernels);
    }
  }
  return run;
}

// Single-level runs put together as one (combine_level_runs), with their kernel rows.
Result<results::HtmlRun> combine_html_runs(std::vector<results::HtmlRun> runs) {
  std::vector<results::RunResults> parts;
  results::HtmlRun combined;
  for (results::HtmlRun& run : runs) {
    parts.push_back(std::move(run.results));
    combined.kernels.merge(run.kernels);
  }
  auto results = results::combine_level_runs(std::move(parts));
  if (!results) return results.error();
  combined.results = std::move(*results);
  return combined;
}

}  // namespace

Command add_report_command(CLI::App& parent) {
  struct Options {
    std::vector<std::string> runs;
    std::string db = kDefaultDatabase, html, baseline_file;
    bool json = false, time = false;
    results::ReportOptions report;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("report", "Summarize a run: correctness, fast_p, speedups, pass@k per level");
  app->add_option(
         "runs", o->runs,
         "Run id or DATABASE:RUN (see dicebench query \"select * from runs\"); several single-level runs of one "
         "model make one table by level; with --html, two runs of one suite are overlaid")
      ->required();
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  auto* json = app->add_flag("--json", o->json, "Print JSON instead of a table");
  app->add_option("--html", o->html, "Write a self-contained HTML report to this file")->excludes(json);
  app->add_flag("--time", o->time,
                "Also say where each run's evaluation time went (phase groups, load waits by compile path, torch's "
                "toolchain builds, the slowest candidates); with --json, under \"time\"");
  app->add_flag("--exclude-degenerate", o->report.exclude_degenerate,
                "Leave problems with degenerate traits (passable without computing the answer) out of fast_p and the "
                "geometric-mean speedup");
  app->add_option("--baseline-file", o->baseline_file,
                  "Speedups and fast_p against this published KernelBench baseline file (baseline_time_torch.json): "
                  "published mean / candidate mean; problems the file lacks are listed and get no speedup");
  return {app, [o]() {
            std::optional<results::PublishedBaselines> published;
            if (!o->baseline_file.empty()) {
              auto read = results::read_published_baselines(o->baseline_file);
              if (!read) return fail(read.error().message);
              published = std::move(*read);
            }
            std::vector<RunReference> references;
            for (const std::string& text : o->runs) {
              auto reference = parse_run_reference(text, o->db, false);
              if (!reference) return fail(reference.error().message);
              references.push_back(std::move(*reference));
            }
            if (!o->html.empty()) {
              std::vector<results::HtmlRun> runs;
              for (const RunReference& reference : references) {
                auto run = load_html_run(reference);
                if (!run) return fail(run.error().message);
                if (published) results::apply_published_baselines(run->results, *published);
                runs.push_back(std::move(*run));
              }
              const bool overlay = runs.size() == 2 && runs[0].results.run.suite == runs[1].results.run.suite;
              if (runs.size() > 1 && !overlay) {
                auto combined = combine_html_runs(std::move(runs));
                if (!combined) return fail(combined.error().message);
                runs = {std::move(*combined)};
              }
              auto written = write_output(o->html, results::render_html_report(runs, o->report));
              if (!written) return fail(written.error().message);
              fmt::print("wrote {}\n", o->html);
              return 0;
            }
            std::vector<results::RunResults> runs;
            for (const RunReference& reference : references) {
              auto run = load_run(reference);
              if (!run) return fail(run.error().message);
              runs.push_back(std::move(*run));
            }
            auto run = runs.size() == 1 ? Result<results::RunResults>(std::move(runs[0]))
                                        : results::combine_level_runs(std::move(runs));
            if (!run) return fail(run.error().message);
            std::optional<results::PublishedCoverage> coverage;
            if (published) coverage = results::apply_published_baselines(*run, *published);
            const results::RunReport report = results::compute_report(*run, o->report);
            std::vector<results::TimeBreakdown> times;  // one per run given
            if (o->time)
              for (const RunReference& reference : references) {
                if (reference.database.empty())
                  return fail(fmt::format("--time needs a run in a database; {} is a summary file", reference.text));
                auto store = results::Store::open(reference.database, results::OpenMode::ReadOnly);
                if (!store) return fail(store.error().message);
                auto time = results::time_breakdown(*store, reference.run);
                if (!time) return fail(time.error().message);
                times.push_back(std::move(*time));
              }
            if (o->json) {
              nlohmann::json out = results::report_json(report);
              if (coverage) out["published_baselines"] = results::coverage_json(*coverage);
              if (o->time) {
                out["time"] = nlohmann::json::array();
                for (size_t i = 0; i < times.size(); ++i)
                  out["time"].push_back(
                      {{"run", references[i].run}, {"breakdown", results::time_breakdown_json(times[i])}});
              }
              fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
              return 0;
            }
            fmt::print("{}", results::format_report(report));
            if (coverage) fmt::print("{}", results::format_coverage(*coverage));
            for (size_t i = 0; i < times.size(); ++i)
              fmt::print("\nrun {}: {}", references[i].run, results::format_time_breakdown(times[i]));
            return 0;
          }};
}

}  // namespace dicebench::cli
