// Finds plugins and the names they provide; loads them on demand.
#include "core/host/plugin_registry.hpp"

#include "core/base/text.hpp"
#include "core/host/log.hpp"
#include "core/host/plugin_manifest.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

#ifndef DICEBENCH_BUILD_PLUGIN_DIR
#define DICEBENCH_BUILD_PLUGIN_DIR ""
#endif

namespace dicebench::host {
namespace {

namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

bool is_plugin_file(const fs::path& path) {
  const std::string file = path.filename().string();
  return (file.starts_with("libdicebench-model-") || file.starts_with("libdicebench-suite-")) &&
         path.extension() == ".so";
}

bool takes_argument(const std::string& provided) { return !provided.empty() && provided.back() == ':'; }

}  // namespace

std::vector<std::string> PluginRegistry::default_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("DICEBENCH_PLUGIN_PATH")) {
    for (const auto& dir : split(env, ':'))
      if (!dir.empty()) dirs.push_back(dir);
  }
  const std::string exe = executable_dir();
  if (!exe.empty()) {
    dirs.push_back(exe + "/../lib/dicebench/plugins");
    dirs.push_back(exe + "/plugins");
  }
  // The build tree's plugins, for executables and tests that run from the build tree only.
  const fs::path build_plugins = DICEBENCH_BUILD_PLUGIN_DIR;
  std::error_code ec;
  if (!build_plugins.empty() && !exe.empty() &&
      fs::equivalent(fs::path(exe).parent_path(), build_plugins.parent_path().parent_path().parent_path(), ec))
    dirs.push_back(build_plugins.string());
  return dirs;
}

const PluginRegistry& PluginRegistry::installed(const std::vector<std::string>& dirs) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::unique_ptr<PluginRegistry>> discovered;
  std::lock_guard guard(mutex);
  auto& registry = discovered[dirs];
  if (!registry) registry = std::make_unique<PluginRegistry>(discover(dirs));
  return *registry;
}

PluginRegistry PluginRegistry::discover(const std::vector<std::string>& dirs) {
  PluginRegistry registry;
  std::set<std::string> seen_dirs, seen_files;
  std::map<std::string, std::string> owner;  // provided name -> file
  for (const auto& dir : dirs) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(dir, ec);
    if (ec || !fs::is_directory(canonical, ec) || !seen_dirs.insert(canonical.string()).second) continue;
    std::vector<fs::path> files;
    for (const auto& item : fs::directory_iterator(canonical, ec))
      if (item.is_regular_file() && is_plugin_file(item.path())) files.push_back(item.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      const std::string file_name = file.filename().string();
      if (!seen_files.insert(file_name).second) {
        log_debug("plugin {} is shadowed by an earlier one of the same name", file.string());
        continue;
      }
      PluginInfo info;
      auto manifest = read_manifest(file.string());
      if (manifest && manifest->has_value()) {
        info = std::move(**manifest);
      } else {
        if (!manifest) registry.problems_.push_back(manifest.error().message);
        auto loaded = load_plugin_library(file.string());
        if (!loaded) {
          registry.problems_.push_back(loaded.error().message);
          continue;
        }
        info = loaded->info;
      }
      if (auto kind = kind_from_file_name(file.string()); !kind || *kind != info.kind) {
        registry.problems_.push_back(
            fmt::format("{}: wrong kind: declares a {} plugin but its file name says otherwise", file.string(),
                        kind_name(info.kind)));
        continue;
      }
      bool clash = false;
      for (const auto& provided : info.provides) {
        const std::string key = std::string(kind_name(info.kind)) + "/" + provided.name;
        if (auto it = owner.find(key); it != owner.end()) {
          registry.problems_.push_back(fmt::format("duplicate {} name '{}': provided by {} and by {}",
                                                   kind_name(info.kind), provided.name, it->second, file.string()));
          registry.duplicates_[key] = {it->second, file.string()};
          clash = true;
        }
      }
      if (clash) continue;
      for (const auto& provided : info.provides)
        owner[std::string(kind_name(info.kind)) + "/" + provided.name] = file.string();
      registry.plugins_.push_back(std::make_unique<PluginInfo>(std::move(info)));
    }
  }
  return registry;
}

std::vector<RegistryEntry> PluginRegistry::entries(dicebench_kind kind) const {
  std::vector<RegistryEntry> out;
  for (const auto& plugin : plugins_) {
    if (plugin->kind != kind) continue;
    for (const auto& provided : plugin->provides) out.push_back({provided.name, provided.summary, plugin.get()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<const PluginInfo*> PluginRegistry::plugins(dicebench_kind kind) const {
  std::vector<const PluginInfo*> out;
  for (const auto& plugin : plugins_)
    if (plugin->kind == kind) out.push_back(plugin.get());
  return out;
}

Result<ResolvedName> PluginRegistry::resolve(dicebench_kind kind, const std::string& spec) const {
  const std::string what = kind_name(kind);
  if (spec.empty()) return make_error(fmt::format("no {} given", what));
  for (const auto& [key, files] : duplicates_) {
    const std::string name = key.substr(what.size() + 1);
    if (key.starts_with(what + "/") && (name == spec || (takes_argument(name) && spec.starts_with(name))))
      return make_error(
          fmt::format("{} '{}' is provided by two plugins: {} and {}; remove one", what, name, files[0], files[1]));
  }
  std::vector<std::string> names;
  for (const auto& entry : entries(kind)) {
    const bool argument = takes_argument(entry.name);
    if (!argument && entry.name == spec) return ResolvedName{entry.plugin, entry.name, ""};
    if (argument && spec.starts_with(entry.name)) {
      const std::string arg = spec.substr(entry.name.size());
      if (arg.empty())
        return make_error(fmt::format("{} '{}' needs an argument: {}<...>", what, entry.name, entry.name));
      return ResolvedName{entry.plugin, entry.name, arg};
    }
    names.push_back(argument ? entry.name.substr(0, entry.name.size() - 1) : entry.name);
  }
  const std::string base = spec.substr(0, spec.find(':'));
  std::string message = fmt::format("unknown {} '{}'", what, spec);
  if (const std::string hint = did_you_mean(base, names); !hint.empty())
    message += "; " + hint;
  else if (!names.empty())
    message += fmt::format(" (known: {})", join(names, ", "));
  else
    message += " (no " + what + " plugins found; set DICEBENCH_PLUGIN_PATH)";
  if (!problems_.empty())
    message += fmt::format(" [{} plugin(s) could not be used: {}]", problems_.size(), problems_.front());
  return make_error(message);
}

Result<LoadedPlugin> PluginRegistry::load(const PluginInfo& info) const {
  auto loaded = load_plugin_library(info.path);
  if (!loaded) return loaded.error();
  std::vector<std::string> expected, actual;
  for (const auto& p : info.provides) expected.push_back(p.name);
  for (const auto& p : loaded->info.provides) actual.push_back(p.name);
  if (expected != actual || loaded->info.kind != info.kind || loaded->info.name != info.name)
    return make_error(
        fmt::format("{}: its manifest is stale (it names {} but the library provides {}); rebuild the plugin",
                    info.path, join(expected, ", "), join(actual, ", ")));
  if (loaded->info.options != info.options)
    return make_error(fmt::format(
        "{}: its manifest is stale (the library declares other command-line options); rebuild the plugin", info.path));
  return loaded;
}

}  // namespace dicebench::host
