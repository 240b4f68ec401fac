// The dicebench executable: parses the command line and runs one subcommand. Every failure ends
// as one "dicebench: error: ..." line and a non-zero exit.
#include "core/base/one_line.hpp"
#include "core/cli/commands.hpp"
#include "core/host/log.hpp"

#include <dicebench_build_info.h>

#include <cstdio>
#include <exception>
#include <vector>

namespace dicebench::cli {

// A message may quote what the user gave (a name, a value), line breaks included; it still prints as one line.
int fail(const std::string& message) {
  std::fprintf(stderr, "dicebench: error: %s\n", on_one_line(message).c_str());
  return 1;
}

}  // namespace dicebench::cli

int main(int argc, char** argv) {
  using namespace dicebench;
  CLI::App app{"dicebench: evaluate language models that write CUDA kernels", "dicebench"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(DICEBENCH_VERSION) + " (" + DICEBENCH_GIT_SHA + ")");
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug details");
  app.add_flag("-q,--quiet", quiet, "Log warnings and errors only");

  const std::vector<cli::Command> commands = {
      cli::add_run_command(app),    cli::add_eval_command(app), cli::add_list_command(app), cli::add_query_command(app),
      cli::add_report_command(app), cli::add_show_command(app),
      cli::add_export_command(app), cli::add_compare_command(app), cli::add_gate_command(app), cli::add_baselines_command(app),
      cli::add_plugin_manifest_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "dicebench: error: %s (see dicebench --help)\n", on_one_line(e.what()).c_str());
    return 2;
  }
  host::set_log_level(verbose ? host::LogLevel::debug : quiet ? host::LogLevel::warn : host::LogLevel::info);
  try {
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const std::exception& e) {
    return cli::fail(e.what());
  }
  return cli::fail("no command given (see dicebench --help)");
}
