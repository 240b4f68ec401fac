// `dicebench plugin-manifest LIB`: writes LIB.manifest.json (run by the build after linking a
// plugin) so listing never has to load the library.
#include "core/cli/commands.hpp"
#include "core/host/plugin_manifest.hpp"

#include <memory>

namespace dicebench::cli {

Command add_plugin_manifest_command(CLI::App& parent) {
  auto library = std::make_shared<std::string>();
  CLI::App* app =
      parent.add_subcommand("plugin-manifest", "Write the manifest beside a plugin library (used by the build)");
  app->group("");  // hidden from --help
  app->add_option("library", *library, "Plugin shared library")->required();
  return {app, [library]() {
            auto written = host::write_manifest(*library);
            if (!written) return fail(written.error().message);
            return 0;
          }};
}

}  // namespace dicebench::cli
