// `dicebench list models|suites`: the names the installed plugins provide, without loading
// plugins that have a manifest.
#include "core/cli/commands.hpp"
#include "core/host/plugin_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace dicebench::cli {

Command add_list_command(CLI::App& parent) {
  auto what = std::make_shared<std::string>();
  CLI::App* app = parent.add_subcommand("list", "List the models or suites the plugins provide");
  app->add_option("what", *what, "models or suites")->required()->check(CLI::IsMember({"models", "suites"}));
  return {app, [what]() {
            const auto& registry = host::PluginRegistry::installed();
            const dicebench_kind kind = *what == "models" ? DICEBENCH_KIND_MODEL : DICEBENCH_KIND_SUITE;
            const auto entries = registry.entries(kind);
            size_t width = 4;
            for (const auto& e : entries) width = std::max(width, e.name.size() + (e.name.back() == ':' ? 5 : 0));
            for (const auto& e : entries) {
              const std::string shown = e.name.back() == ':' ? e.name + "<arg>" : e.name;
              fmt::print("{:<{}}  {}  [{} {}]\n", shown, width, e.summary, e.plugin->name, e.plugin->version);
            }
            if (entries.empty())
              fmt::print("no {} found (plugin folders: DICEBENCH_PLUGIN_PATH, beside the executable, the build tree)\n",
                         *what);
            for (const auto& problem : registry.problems())
              std::fprintf(stderr, "dicebench: error: %s\n", problem.c_str());
            return registry.problems().empty() ? 0 : 1;
          }};
}

}  // namespace dicebench::cli
