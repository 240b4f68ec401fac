// --tolerance as `run` and `eval` take it: a tolerance mode, or an old name of one, checked as the
// host reads eval.tolerance (host::tolerance_mode) and passed on as given.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace dicebench::cli {

CLI::Option* add_tolerance_option(CLI::App& app, std::string& mode);

}  // namespace dicebench::cli
