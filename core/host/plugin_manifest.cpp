// Plugin manifests beside plugin libraries: written at build time, read by the registry.
#include "core/host/plugin_manifest.hpp"
#include "core/base/whole_file.hpp"

#include "core/base/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace dicebench::host {
namespace {

namespace fs = std::filesystem;

struct FileStamp {
  uintmax_t size = 0;
  long long mtime_ns = 0;
};

Result<FileStamp> stamp_of(const std::string& path) {
  std::error_code ec;
  FileStamp stamp;
  stamp.size = fs::file_size(path, ec);
  if (ec) return make_error(fmt::format("{}: {}", path, ec.message()));
  const auto time = fs::last_write_time(path, ec);
  if (ec) return make_error(fmt::format("{}: {}", path, ec.message()));
  stamp.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
  return stamp;
}

}  // namespace

std::string manifest_path_for(const std::string& library_path) { return library_path + ".manifest.json"; }

Result<std::string> write_manifest(const std::string& library_path) {
  auto plugin = load_plugin_library(library_path);
  if (!plugin) return plugin.error();
  auto stamp = stamp_of(library_path);
  if (!stamp) return stamp.error();
  const PluginInfo& info = plugin->info;
  nlohmann::json provides = nlohmann::json::array();
  for (const auto& p : info.provides) provides.push_back({{"name", p.name}, {"summary", p.summary}});
  nlohmann::json options = nlohmann::json::array();
  for (const auto& o : info.options)
    options.push_back({{"flag", o.flag}, {"setting", o.setting}, {"value_name", o.value_name}, {"help", o.help}});
  const nlohmann::json manifest = {
      {"abi_major", info.abi_major},
      {"abi_minor", info.abi_minor},
      {"kind", kind_name(info.kind)},
      {"name", info.name},
      {"version", info.version},
      {"build_id", info.build_id},
      {"provides", provides},
      {"options", options},
      {"library",
       {{"file", fs::path(library_path).filename().string()}, {"size", stamp->size}, {"mtime_ns", stamp->mtime_ns}}}};
  const std::string out_path = manifest_path_for(library_path);
  const std::string temp_path = out_path + ".tmp";
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    out << manifest.dump(2) << '\n';
    if (!out) return make_error(fmt::format("cannot write {}", temp_path));
  }
  std::error_code ec;
  fs::rename(temp_path, out_path, ec);
  if (ec) return make_error(fmt::format("cannot write {}: {}", out_path, ec.message()));
  return out_path;
}

Result<std::optional<PluginInfo>> read_manifest(const std::string& library_path) {
  const std::string path = manifest_path_for(library_path);
  if (!fs::exists(path)) return std::optional<PluginInfo>{};
  const auto read = read_whole_file(path);
  if (!read) return read.error();
  const std::string& text = *read;
  try {
    const auto manifest = nlohmann::json::parse(text);
    auto stamp = stamp_of(library_path);
    if (!stamp) return stamp.error();
    const auto& library = manifest.at("library");
    if (library.at("size").get<uintmax_t>() != stamp->size ||
        library.at("mtime_ns").get<long long>() != stamp->mtime_ns)
      return std::optional<PluginInfo>{};  // stale: the registry probes the library instead
    PluginInfo info;
    info.path = library_path;
    const std::string kind = manifest.at("kind").get<std::string>();
    if (kind == "model")
      info.kind = DICEBENCH_KIND_MODEL;
    else if (kind == "suite")
      info.kind = DICEBENCH_KIND_SUITE;
    else
      return make_error(fmt::format("{}: unknown kind '{}'", path, kind));
    info.name = manifest.at("name").get<std::string>();
    info.version = manifest.at("version").get<std::string>();
    info.build_id = manifest.at("build_id").get<std::string>();
    info.abi_major = manifest.at("abi_major").get<uint32_t>();
    info.abi_minor = manifest.at("abi_minor").get<uint32_t>();
    for (const auto& p : manifest.at("provides"))
      info.provides.push_back({p.at("name").get<std::string>(), p.at("summary").get<std::string>()});
    // Written before ABI 1.2: no options, which is all a plugin of that time can declare; a 1.2
    // plugin's manifest without them was written by an older dicebench, and is stale.
    if (!manifest.contains("options")) {
      if (info.abi_minor >= 2) return std::optional<PluginInfo>{};
    } else {
      for (const auto& o : manifest.at("options"))
        info.options.push_back({o.at("flag").get<std::string>(), o.at("setting").get<std::string>(),
                                o.at("value_name").get<std::string>(), o.at("help").get<std::string>()});
      DICEBENCH_TRY(check_declared_options(path, info.kind, info.name, info.options));
    }
    return std::optional<PluginInfo>(std::move(info));
  } catch (const std::exception& e) {
    return make_error(
        fmt::format("{}: malformed plugin manifest ({}); rebuild the plugin or delete the file", path, e.what()));
  }
}

}  // namespace dicebench::host
