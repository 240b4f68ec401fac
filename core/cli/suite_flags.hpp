// The flags installed suite plugins declare (ABI 1.2, dicebench_option), added to a command before
// its arguments are parsed: each sets one of its plugin's settings, as --kernelbench-root sets
// kernelbench.root for the KernelBench suite. Two plugins declaring one flag, or a plugin declaring
// a flag the command has itself, is a conflict that the command reports instead of running.
#pragma once

#include "core/host/config.hpp"
#include "core/host/plugin_registry.hpp"

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

namespace dicebench::cli {

struct SuiteFlags {
  std::map<std::string, std::string> given;  // setting -> value, for each suite flag on the command line
  std::vector<std::string> conflicts;        // one line each, naming both sides

  // Sets each given flag's setting in `config`.
  void apply(host::Config& config) const;
};

// Adds to `app` the flags that the suite plugins in `registry` declare, in a group per plugin; their
// values land in `flags` (which must outlive parsing). A flag that `app` or its parent already has,
// or that an earlier plugin declared, is not added and is recorded in flags.conflicts.
void add_suite_flags(CLI::App& app, const host::PluginRegistry& registry, SuiteFlags& flags);

}  // namespace dicebench::cli
