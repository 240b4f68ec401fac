// Plugin manifests: <library>.manifest.json beside a plugin, written at build time by
// `dicebench plugin-manifest`, so the registry can list names without loading the library
// (and whatever heavy libraries it links), nor to find the flags suite plugins declare. A manifest
// whose recorded library size or modification time differs from the file's is stale and ignored,
// as is one of an ABI 1.2 plugin written without the "options" key (by a dicebench before 1.2).
#pragma once

#include "core/base/result.hpp"
#include "core/host/plugin_library.hpp"

#include <optional>
#include <string>

namespace dicebench::host {

std::string manifest_path_for(const std::string& library_path);

// Loads the library, then writes its manifest beside it.
Result<std::string> write_manifest(const std::string& library_path);

// The manifest's info when it exists and matches the library file; nullopt when absent or stale.
Result<std::optional<PluginInfo>> read_manifest(const std::string& library_path);

}  // namespace dicebench::host
