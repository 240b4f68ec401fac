// The dicebench subcommands: each adds itself to the CLI11 app and returns the action to run
// when it was chosen. Actions return the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace dicebench::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

inline constexpr const char* kDefaultDatabase = "results/dicebench.db";

Command add_run_command(CLI::App& parent);
Command add_eval_command(CLI::App& parent);
Command add_serve_command(CLI::App& parent);
Command add_list_command(CLI::App& parent);
Command add_query_command(CLI::App& parent);
Command add_report_command(CLI::App& parent);
Command add_show_command(CLI::App& parent);
Command add_export_command(CLI::App& parent);
Command add_compare_command(CLI::App& parent);
Command add_gate_command(CLI::App& parent);
Command add_baselines_command(CLI::App& parent);
Command add_plugin_manifest_command(CLI::App& parent);

// Prints "dicebench: error: <message>" and returns the exit code for failures.
int fail(const std::string& message);

}  // namespace dicebench::cli
