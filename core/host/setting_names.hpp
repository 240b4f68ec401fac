// Which setting names a configuration (a --config file, --set KEY=VALUE, a suite's flags) may hold:
// the run's own top-level keys (config.hpp: kRunKeys), the [eval] section's (evaluation_settings.hpp:
// kEvalKeys), and a section named after an installed plugin, whose keys are that plugin's to read.
// A name outside these is a typo that would otherwise be ignored (kernelbench.promt runs the default
// prompt): one error line naming it, with the closest known name.
#pragma once

#include "core/base/result.hpp"
#include "core/host/config.hpp"
#include "core/host/plugin_registry.hpp"

#include <set>
#include <string>
#include <vector>

namespace dicebench::host {

Result<void> check_setting_names(const Config& config, const PluginRegistry& registry);

// Once the plugins are open: every key of `given` in the section of a plugin in `opened` must be one
// that plugin asked for (`asked`: HostServices::asked(); plugins read their settings when they
// open, plugin.h says so). A key in another plugin's section is refused unless `other_sections` (a
// run's --config file may hold the sections of models it does not use).
Result<void> check_settings_asked(const Config& given, const std::set<std::string>& asked,
                                  const std::vector<std::string>& opened, bool other_sections);

}  // namespace dicebench::host
