// Finding a model folder in the standard Hugging Face hub cache, as huggingface_hub lays it out
// (models--ORG--NAME/refs/main, models--ORG--NAME/snapshots/REVISION/). Nothing is downloaded.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/base/result.hpp"

namespace dicebench::local {

// The hub cache huggingface_hub uses: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (a leading ~ is $HOME).
std::filesystem::path hub_cache_dir();

struct CachedModel {
  std::filesystem::path folder;  // the snapshot folder
  std::string revision;          // its name (a commit hash)
};

// The snapshot refs/main names, else the only or newest snapshot. A missing model (or one without
// config.json) is an error saying where it looked and the command that downloads it.
Result<CachedModel> find_cached_model(const std::filesystem::path& hub_cache, std::string_view hub_repo);

// "hf download ORG/NAME": the command that puts a model into the cache.
std::string download_command(std::string_view hub_repo);

}  // namespace dicebench::local
