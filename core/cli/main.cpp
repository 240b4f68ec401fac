// The dicebench executable: parses the command line and runs one subcommand. Every failure ends
// as one "dicebench: error: ..." line and a non-zero exit.
#include "core/base/one_line.hpp"
#include "core/base/text.hpp"
#include "core/cli/commands.hpp"
#include "core/host/log.hpp"

#include <dicebench_build_info.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

namespace dicebench::cli {

// A message may quote what the user gave (a name, a value), line breaks included; it still prints as one line.
int fail(const std::string& message) {
  std::fprintf(stderr, "dicebench: error: %s\n", on_one_line(message).c_str());
  return 1;
}

namespace {

// The command a parse error belongs to ("dicebench run"), for the help it points to, and what to
// say of a word that names no command where one is due ("dicebench bogus", "dicebench baselines
// bogus"), which CLI11 reports only as a missing subcommand.
struct ParsePlace {
  std::string command = "dicebench";
  std::string unknown;             // the word given where a command was due, if any
  std::string unknown_option;      // an option before any command that dicebench does not have
  std::vector<std::string> known;  // the commands that could have been given there
};

ParsePlace parse_place(const CLI::App& app, int argc, char** argv) {
  ParsePlace place;
  const CLI::App* level = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.starts_with('-')) {
      // Before any command, an option of dicebench's own or nothing ("dicebench --bogus").
      if (level == &app && place.unknown_option.empty() &&
          app.get_option_no_throw(word.substr(0, word.find('='))) == nullptr)
        place.unknown_option = word;
      continue;
    }
    const auto subcommands = level->get_subcommands([](const CLI::App*) { return true; });
    if (subcommands.empty()) break;
    const auto found = std::find_if(subcommands.begin(), subcommands.end(),
                                    [&](const CLI::App* sub) { return sub->check_name(word); });
    if (found == subcommands.end()) {
      place.unknown = word;
      for (const CLI::App* sub : subcommands) place.known.push_back(sub->get_name());
      break;
    }
    level = *found;
    place.command += " " + (*found)->get_name();
  }
  if (place.unknown.empty())  // the commands that could have come next
    for (const CLI::App* sub : level->get_subcommands([](const CLI::App*) { return true; }))
      place.known.push_back(sub->get_name());
  return place;
}

}  // namespace

}  // namespace dicebench::cli

int main(int argc, char** argv) {
  using namespace dicebench;
  CLI::App app{"dicebench: evaluate language models that write CUDA kernels", "dicebench"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(DICEBENCH_VERSION) + " (" + DICEBENCH_GIT_SHA + ")");
  bool verbose = false, quiet = false;
  auto* verbose_flag = app.add_flag("-v,--verbose", verbose, "Log debug details");
  app.add_flag("-q,--quiet", quiet, "Log warnings and errors only")->excludes(verbose_flag);

  const std::vector<cli::Command> commands = {
      cli::add_run_command(app),  cli::add_eval_command(app),      cli::add_serve_command(app),
      cli::add_list_command(app), cli::add_query_command(app),     cli::add_report_command(app),
      cli::add_show_command(app), cli::add_export_command(app),    cli::add_compare_command(app),
      cli::add_gate_command(app), cli::add_baselines_command(app), cli::add_plugin_manifest_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const cli::ParsePlace place = cli::parse_place(app, argc, argv);
    std::string message = on_one_line(e.what());
    if (place.unknown.empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
        message.starts_with("A subcommand"))
      message = fmt::format("no command given (commands: {})", join(place.known, ", "));
    if (place.command == "dicebench" && place.unknown.empty() && !place.unknown_option.empty())
      message = fmt::format("dicebench has no option '{}' (options go after the command: dicebench run --help)",
                            on_one_line(place.unknown_option));
    if (!place.unknown.empty()) {
      message = fmt::format("{} has no command '{}'", place.command, on_one_line(place.unknown));
      const std::string hint = did_you_mean(place.unknown, place.known);
      message += hint.empty() ? fmt::format(" (commands: {})", join(place.known, ", ")) : "; " + hint;
    }
    std::fprintf(stderr, "dicebench: error: %s (see %s --help)\n", message.c_str(), place.command.c_str());
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
