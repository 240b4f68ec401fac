// `dicebench export RUN --format kernelbench|jsonl|csv|summary`: a run's results for other tools
// (KernelBench's eval_results.json, JSON lines, CSV) or as a run summary file for `gate`; with
// --baseline-file, the speedups against a published KernelBench baseline file.
#include "core/cli/commands.hpp"
#include "core/cli/number_checks.hpp"
#include "core/cli/run_reference.hpp"
#include "results/report/export.hpp"
#include "results/report/published_baselines.hpp"
#include "results/report/summary_file.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>

namespace dicebench::cli {

Command add_export_command(CLI::App& parent) {
  struct Options {
    std::string run, db = kDefaultDatabase, format, output = "-", baseline_file;
    std::optional<int> level;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app =
      parent.add_subcommand("export", "Export a run: KernelBench eval_results.json, JSON lines, CSV or a summary");
  app->add_option("run", o->run, "Run id, or DATABASE:RUN")->required();
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  app->add_option("--format", o->format, "kernelbench, jsonl, csv or summary (a baseline for dicebench gate)")
      ->check(CLI::IsMember({"kernelbench", "jsonl", "csv", "summary"}))
      ->required();
  app->add_option("--level", o->level, "With --format kernelbench: the level to export from a run over several")
      ->check(whole_number(1));
  app->add_option("-o,--output", o->output, "File to write (- for standard output)")->capture_default_str();
  app->add_option("--baseline-file", o->baseline_file,
                  "Speedups against this published KernelBench baseline file (problems it lacks get none)");
  return {app, [o]() {
            if (o->level && o->format != "kernelbench") return fail("--level goes with --format kernelbench only");
            auto reference = parse_run_reference(o->run, o->db, false);
            if (!reference) return fail(reference.error().message);
            auto run = load_run(*reference);
            if (!run) return fail(run.error().message);
            if (!o->baseline_file.empty()) {
              auto published = results::read_published_baselines(o->baseline_file);
              if (!published) return fail(published.error().message);
              const results::PublishedCoverage coverage = results::apply_published_baselines(*run, *published);
              fmt::print(stderr, "{}", results::format_coverage(coverage));  // stdout may be the export
            }
            std::string text;
            if (o->format == "kernelbench") {
              auto exported = results::export_kernelbench(*run, o->level);
              if (!exported) return fail(exported.error().message);
              text = std::move(*exported);
            } else if (o->format == "jsonl") {
              text = results::export_jsonl(*run);
            } else if (o->format == "csv") {
              text = results::export_csv(*run);
            } else {
              text = results::write_summary(*run);
            }
            auto written = write_output(o->output, text);
            if (!written) return fail(written.error().message);
            return 0;
          }};
}

}  // namespace dicebench::cli
