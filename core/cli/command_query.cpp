// `dicebench query SQL`: one read-only SQL statement over the results database, printed as an
// aligned table, CSV or JSON.
#include "core/cli/commands.hpp"
#include "results/report/query_format.hpp"
#include "results/store/query.hpp"

#include <fmt/format.h>

#include <memory>

namespace dicebench::cli {

Command add_query_command(CLI::App& parent) {
  struct Options {
    std::string sql, db = kDefaultDatabase, format = "table";
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("query", "Run one read-only SQL statement on the results database");
  app->add_option("sql", o->sql, "SQL, e.g. \"select status, count(*) from evaluations group by status\"")->required();
  app->add_option("--db", o->db, "Results database")->capture_default_str();
  app->add_option("--format", o->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  return {app, [o]() {
            auto result = results::run_query(o->db, o->sql);
            if (!result) return fail(result.error().message);
            if (o->format == "csv")
              fmt::print("{}", results::format_csv(*result));
            else if (o->format == "json")
              fmt::print("{}\n", results::format_json(*result));
            else
              fmt::print("{}", results::format_table(*result));
            return 0;
          }};
}

}  // namespace dicebench::cli
