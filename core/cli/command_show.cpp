// `dicebench show RUN`: a run's settings, versions and per-problem verdicts.
#include "core/cli/commands.hpp"
#include "core/cli/number_checks.hpp"
#include "results/report/run_summary.hpp"
#include "results/store/store.hpp"

#include <fmt/format.h>

#include <memory>

namespace dicebench::cli {

Command add_show_command(CLI::App& parent) {
  struct Options {
    int64_t run = 0;
    std::string db = kDefaultDatabase;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("show", "Show a run: settings, versions, per-problem verdicts");
  app->add_option("run", o->run, "Run id")->check(whole_number(1))->required();
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  return {app, [o]() {
            auto store = results::Store::open(o->db, results::OpenMode::ReadOnly);
            if (!store) return fail(store.error().message);
            auto summary = results::format_run_summary(*store, o->run);
            if (!summary) return fail(summary.error().message);
            fmt::print("{}", *summary);
            return 0;
          }};
}

}  // namespace dicebench::cli
