// The flags suite plugins declare, as options of a CLI11 command, and the settings they set.
#include "core/cli/suite_flags.hpp"

#include <fmt/format.h>

namespace dicebench::cli {
namespace {

std::string plugin_named(const host::PluginInfo& plugin) {
  return fmt::format("suite plugin '{}' ({})", plugin.name, plugin.path);
}

}  // namespace

void SuiteFlags::apply(host::Config& config) const {
  for (const auto& [setting, value] : given) config.set(setting, value);
}

void add_suite_flags(CLI::App& app, const host::PluginRegistry& registry, SuiteFlags& flags) {
  std::map<std::string, const host::PluginInfo*> declared_by;  // flag -> the plugin whose option it is
  for (const host::PluginInfo* plugin : registry.plugins(DICEBENCH_KIND_SUITE)) {
    for (const auto& option : plugin->options) {
      const std::string name = "--" + option.flag;
      if (auto earlier = declared_by.find(option.flag); earlier != declared_by.end()) {
        flags.conflicts.push_back(fmt::format("{} is declared by two suite plugins, {} and {}; remove one of them",
                                              name, plugin_named(*earlier->second), plugin_named(*plugin)));
        continue;
      }
      if (app.get_option_no_throw(name) != nullptr ||
          (app.get_parent() && app.get_parent()->get_option_no_throw(name) != nullptr)) {
        flags.conflicts.push_back(
            fmt::format("{} declares {}, which is dicebench {}'s own flag; remove the plugin or rebuild it without "
                        "that flag",
                        plugin_named(*plugin), name, app.get_name()));
        continue;
      }
      declared_by[option.flag] = plugin;
      const std::string help =
          fmt::format("{}{}(sets {})", option.help, option.help.empty() ? "" : " ", option.setting);
      app.add_option_function<std::string>(
             name, [&flags, setting = option.setting](const std::string& value) { flags.given[setting] = value; }, help)
          ->type_name(option.value_name.empty() ? "VALUE" : option.value_name)
          ->group(fmt::format("Options of the {} suite plugin", plugin->name));
    }
  }
}

}  // namespace dicebench::cli
