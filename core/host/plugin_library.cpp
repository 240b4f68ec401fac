// Loads one plugin shared library and validates its descriptor against the host's ABI.
#include "core/host/plugin_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstddef>
#include <filesystem>

namespace dicebench::host {
namespace {

std::string to_string(dicebench_str s) { return s.data ? std::string(s.data, s.size) : std::string(); }

// The smallest struct sizes this host accepts (ABI 1.0 layouts).
constexpr size_t kMinDescriptorSize = offsetof(dicebench_plugin_descriptor, api) + sizeof(void*);
constexpr size_t kMinModelApiSize = offsetof(dicebench_model_api, generate) + sizeof(void*);
constexpr size_t kMinSuiteApiSize = offsetof(dicebench_suite_api, extract) + sizeof(void*);
// A descriptor that holds the declared options (ABI 1.2).
constexpr size_t kOptionsDescriptorSize =
    offsetof(dicebench_plugin_descriptor, optional_options_count) + sizeof(size_t);

// The options a descriptor declares: none where it is shorter than ABI 1.2's.
Result<std::vector<DeclaredOption>> declared_options(const std::string& path, const dicebench_plugin_descriptor& d) {
  std::vector<DeclaredOption> options;
  if (d.struct_size < kOptionsDescriptorSize || d.optional_options_count == 0) return options;
  if (!d.optional_options)
    return make_error(
        fmt::format("{}: descriptor declares {} option(s) but no array of them", path, d.optional_options_count));
  for (size_t i = 0; i < d.optional_options_count; ++i) {
    const dicebench_option& o = d.optional_options[i];
    options.push_back({to_string(o.flag), to_string(o.setting), to_string(o.value_name), to_string(o.help)});
  }
  return options;
}

}  // namespace

const char* kind_name(dicebench_kind kind) {
  switch (kind) {
    case DICEBENCH_KIND_MODEL:
      return "model";
    case DICEBENCH_KIND_SUITE:
      return "suite";
  }
  return "unknown";
}

Result<dicebench_kind> kind_from_file_name(const std::string& path) {
  const std::string file = std::filesystem::path(path).filename().string();
  if (file.starts_with("libdicebench-model-")) return DICEBENCH_KIND_MODEL;
  if (file.starts_with("libdicebench-suite-")) return DICEBENCH_KIND_SUITE;
  return make_error(fmt::format("{}: plugin file names start with libdicebench-model- or libdicebench-suite-", path));
}

Result<LoadedPlugin> load_plugin_library(const std::string& path) {
  auto file_kind = kind_from_file_name(path);
  if (!file_kind) return file_kind.error();

  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return make_error(fmt::format("cannot load plugin {}: {}", path, why ? why : "unknown dlopen error"));
  }
  // Never dlclose: a plugin's libraries may keep process-wide state.
  dlerror();
  void* symbol = dlsym(handle, DICEBENCH_ENTRY_SYMBOL);
  if (!symbol) {
    return make_error(
        fmt::format("{} is not a dicebench plugin: it exports no {} symbol", path, DICEBENCH_ENTRY_SYMBOL));
  }
  const auto entry = reinterpret_cast<dicebench_entry_fn>(symbol);
  const dicebench_plugin_descriptor* d = entry();
  if (!d) return make_error(fmt::format("{}: {} returned no descriptor", path, DICEBENCH_ENTRY_SYMBOL));
  if (d->abi_major != DICEBENCH_ABI_MAJOR) {
    return make_error(fmt::format(
        "{} was built for plugin ABI {}.{}, but this dicebench speaks ABI {}.{}; rebuild the plugin against this SDK",
        path, d->abi_major, d->abi_minor, DICEBENCH_ABI_MAJOR, DICEBENCH_ABI_MINOR));
  }
  if (d->struct_size < kMinDescriptorSize) {
    return make_error(fmt::format("{}: descriptor is {} bytes, ABI {}.0 needs at least {}", path, d->struct_size,
                                  DICEBENCH_ABI_MAJOR, kMinDescriptorSize));
  }
  if (d->kind != DICEBENCH_KIND_MODEL && d->kind != DICEBENCH_KIND_SUITE) {
    return make_error(fmt::format("{}: unknown plugin kind {}", path, static_cast<int>(d->kind)));
  }
  if (d->kind != *file_kind) {
    return make_error(fmt::format("{}: wrong kind: the library declares a {} plugin but its file name says {}", path,
                                  kind_name(d->kind), kind_name(*file_kind)));
  }
  if (!d->name.data || d->name.size == 0) return make_error(fmt::format("{}: descriptor has no plugin name", path));
  if (!d->api) return make_error(fmt::format("{}: descriptor has no function table", path));
  const uint32_t api_size = *static_cast<const uint32_t*>(d->api);
  const size_t needed = d->kind == DICEBENCH_KIND_MODEL ? kMinModelApiSize : kMinSuiteApiSize;
  if (api_size < needed) {
    return make_error(fmt::format("{}: {} function table is {} bytes, ABI {}.0 needs at least {}", path,
                                  kind_name(d->kind), api_size, DICEBENCH_ABI_MAJOR, needed));
  }
  if (d->provides_count == 0 || !d->provides) {
    return make_error(fmt::format("{}: plugin '{}' provides no names", path, to_string(d->name)));
  }

  LoadedPlugin plugin;
  plugin.descriptor = d;
  plugin.api = d->api;
  plugin.info.path = path;
  plugin.info.kind = d->kind;
  plugin.info.name = to_string(d->name);
  plugin.info.version = to_string(d->version);
  plugin.info.build_id = to_string(d->build_id);
  plugin.info.abi_major = d->abi_major;
  plugin.info.abi_minor = d->abi_minor;
  for (size_t i = 0; i < d->provides_count; ++i) {
    const std::string name = to_string(d->provides[i].name);
    if (name.empty()) return make_error(fmt::format("{}: provided name #{} is empty", path, i));
    plugin.info.provides.push_back({name, to_string(d->provides[i].summary)});
  }
  auto options = declared_options(path, *d);
  if (!options) return options.error();
  DICEBENCH_TRY(check_declared_options(path, d->kind, plugin.info.name, *options));
  plugin.info.options = std::move(*options);
  return plugin;
}

}  // namespace dicebench::host
