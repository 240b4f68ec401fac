// Hugging Face hub cache lookup: the cache folder from the environment, then the repository's
// snapshot.
#include "models/local/hf_cache.hpp"
#include "core/base/whole_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/base/text.hpp"

namespace dicebench::local {
namespace fs = std::filesystem;
namespace {

// A path from the environment, with a leading ~ read as $HOME (as huggingface_hub expands it).
std::optional<fs::path> env_path(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  const std::string_view text(value);
  const char* home = std::getenv("HOME");
  if (home && (text == "~" || text.starts_with("~/")))
    return fs::path(home) / std::string(text.substr(std::min<size_t>(2, text.size())));
  return fs::path(text);
}

Error not_cached(std::string_view hub_repo, const fs::path& looked_in, std::string_view why) {
  return make_error(
      fmt::format("{} is not in the Hugging Face cache ({} {}); download it with `{}` (or `huggingface-cli "
                  "download {}`), or give its folder with --model-path",
                  hub_repo, looked_in.string(), why, download_command(hub_repo), hub_repo));
}

}  // namespace

fs::path hub_cache_dir() {
  if (auto cache = env_path("HF_HUB_CACHE")) return *cache;
  if (auto home = env_path("HF_HOME")) return *home / "hub";
  if (auto xdg = env_path("XDG_CACHE_HOME")) return *xdg / "huggingface" / "hub";
  return env_path("HOME").value_or(fs::path("/")) / ".cache" / "huggingface" / "hub";
}

std::string download_command(std::string_view hub_repo) { return fmt::format("hf download {}", hub_repo); }

Result<CachedModel> find_cached_model(const fs::path& hub_cache, std::string_view hub_repo) {
  std::string folder_name = "models--" + std::string(hub_repo);
  for (size_t slash = folder_name.find('/'); slash != std::string::npos; slash = folder_name.find('/'))
    folder_name.replace(slash, 1, "--");
  const fs::path repo = hub_cache / folder_name;
  const fs::path snapshots = repo / "snapshots";
  std::error_code ec;
  if (!fs::is_directory(snapshots, ec)) return not_cached(hub_repo, snapshots, "does not exist");

  CachedModel found;
  if (const auto text = read_whole_file(repo / "refs" / "main")) {
    found.revision = std::string(trim(*text));
    if (!fs::is_directory(snapshots / found.revision, ec))
      return not_cached(hub_repo, repo / "refs" / "main",
                        fmt::format("names revision {}, which has no snapshot folder", found.revision));
  } else {
    fs::file_time_type newest;
    for (const auto& entry : fs::directory_iterator(snapshots, ec)) {
      if (!entry.is_directory(ec)) continue;
      const auto written = entry.last_write_time(ec);
      if (found.revision.empty() || written > newest) {
        found.revision = entry.path().filename().string();
        newest = written;
      }
    }
    if (found.revision.empty()) return not_cached(hub_repo, snapshots, "holds no snapshot");
  }
  found.folder = snapshots / found.revision;
  if (!fs::exists(found.folder / "config.json", ec))
    return not_cached(hub_repo, found.folder, "has no config.json: an interrupted download?");
  return found;
}

}  // namespace dicebench::local
