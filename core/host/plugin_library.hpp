// Loads one plugin shared library and validates its descriptor against the host's ABI.
// Libraries are opened with RTLD_NOW | RTLD_LOCAL and never closed (CUDA and libtorch state
// outlive handles).
#pragma once

#include "core/base/result.hpp"
#include "core/host/declared_options.hpp"

#include <dicebench/plugin.h>

#include <string>
#include <vector>

namespace dicebench::host {

struct ProvidedName {
  std::string name;  // "kernelbench-l1", or "replay:" for a name that takes an argument
  std::string summary;
};

// What a plugin says about itself, from its descriptor or from its manifest.
struct PluginInfo {
  std::string path;
  dicebench_kind kind = DICEBENCH_KIND_MODEL;
  std::string name;
  std::string version;
  std::string build_id;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<ProvidedName> provides;
  std::vector<DeclaredOption> options;  // the flags a suite plugin declares (ABI 1.2; none before)
};

struct LoadedPlugin {
  PluginInfo info;
  const dicebench_plugin_descriptor* descriptor = nullptr;
  const void* api = nullptr;  // dicebench_model_api* or dicebench_suite_api*, per info.kind
};

const char* kind_name(dicebench_kind kind);

// The kind a plugin file name announces (libdicebench-model-*.so, libdicebench-suite-*.so).
Result<dicebench_kind> kind_from_file_name(const std::string& path);

// dlopen + entry symbol + descriptor checks (declared options included); every error is one line
// naming the file.
Result<LoadedPlugin> load_plugin_library(const std::string& path);

}  // namespace dicebench::host
