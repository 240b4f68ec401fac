// Finds plugins and the model and suite names they provide, without loading heavy libraries:
// a plugin with a fresh manifest is listed from it; others are probed by loading them.
// Search order: $DICEBENCH_PLUGIN_PATH, beside the executable, then the build tree. A file name
// found in an earlier folder shadows the same file name later on.
#pragma once

#include "core/base/result.hpp"
#include "core/host/plugin_library.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dicebench::host {

struct RegistryEntry {
  std::string name;  // as provided, "replay:" for argument-taking names
  std::string summary;
  const PluginInfo* plugin = nullptr;
};

struct ResolvedName {
  const PluginInfo* plugin = nullptr;
  std::string name;      // the provided name ("replay:" or "kernelbench-l1")
  std::string argument;  // the text after ':' for argument-taking names
};

class PluginRegistry {
 public:
  static std::vector<std::string> default_search_dirs();
  // Never fails as a whole: unusable plugins are recorded in problems().
  static PluginRegistry discover(const std::vector<std::string>& dirs);
  // The plugins of `dirs`, discovered once per process (a command's flags, its settings check and
  // its run or session all read this one); the registry lives as long as the process.
  static const PluginRegistry& installed(const std::vector<std::string>& dirs = default_search_dirs());

  std::vector<RegistryEntry> entries(dicebench_kind kind) const;
  // The usable plugins of one kind, in the order they were found.
  std::vector<const PluginInfo*> plugins(dicebench_kind kind) const;
  // One line per plugin that could not be used (load errors, duplicate names).
  const std::vector<std::string>& problems() const { return problems_; }

  // "dice-8b" or "replay:/runs/x"; unknown names get a "did you mean" hint.
  Result<ResolvedName> resolve(dicebench_kind kind, const std::string& spec) const;
  // Loads the plugin and checks it still says what its manifest said (names, kind, options).
  Result<LoadedPlugin> load(const PluginInfo& info) const;

 private:
  std::vector<std::unique_ptr<PluginInfo>> plugins_;
  std::vector<std::string> problems_;
  std::map<std::string, std::vector<std::string>> duplicates_;  // name -> files providing it
};

}  // namespace dicebench::host
