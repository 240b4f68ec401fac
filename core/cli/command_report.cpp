// `dicebench report RUN`: per level compiled %, correct %, fast_p, geometric-mean speedup and
// pass@k, as a table or JSON.
#include "core/cli/commands.hpp"
#include "results/report.hpp"
#include "results/report_format.hpp"
#include "results/store.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace dicebench::cli {

Command add_report_command(CLI::App& parent) {
  struct Options {
    int64_t run = 0;
    std::string db = kDefaultDatabase;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("report", "Summarize a run: correctness, fast_p, speedups, pass@k per level");
  app->add_option("run", o->run, "Run id (see dicebench query \"select * from runs\")")->required();
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  app->add_flag("--json", o->json, "Print JSON instead of a table");
  return {app, [o]() {
            auto store = results::Store::open(o->db, results::OpenMode::ReadOnly);
            if (!store) return fail(store.error().message);
            auto report = results::compute_report(*store, o->run);
            if (!report) return fail(report.error().message);
            if (o->json) fmt::print("{}\n", results::report_json(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
            else fmt::print("{}", results::format_report(*report));
            return 0;
          }};
}

}  // namespace dicebench::cli
