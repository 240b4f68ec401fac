// The command-line flags a suite plugin declares (ABI 1.2, dicebench_option in plugin.h), as the
// host keeps them, and the rules every declaration must follow, checked wherever the host reads
// declarations (a plugin's descriptor, its manifest).
#pragma once

#include "core/base/result.hpp"

#include <dicebench/plugin.h>

#include <string>
#include <vector>

namespace dicebench::host {

struct DeclaredOption {
  std::string flag;        // "kernelbench-root", given as --kernelbench-root
  std::string setting;     // "kernelbench.root", in the plugin's own section
  std::string value_name;  // "PATH" for --help (empty: VALUE)
  std::string help;        // one line for --help

  bool operator==(const DeclaredOption&) const = default;
};

// One line naming `where` (the library or manifest) when a declaration breaks a rule: options on a
// model plugin, a flag that is not a lowercase letter followed by lowercase letters, digits and '-',
// a setting outside "<plugin_name>.<key>", a flag or setting declared twice.
Result<void> check_declared_options(const std::string& where, dicebench_kind kind, const std::string& plugin_name,
                                    const std::vector<DeclaredOption>& options);

}  // namespace dicebench::host
