// What identifies a model folder's outputs without reading its weights: a SHA-256 over its JSON
// files (config, generation config, tokenizer, shard index) and each safetensors file's name,
// size and header (every tensor's name, dtype, shape and byte range). Seconds for a 16 GB model.
#pragma once

#include <filesystem>
#include <string>

#include "core/base/result.hpp"

namespace dicebench::local {

// "sha256:<hex>"; an error names a file that cannot be read or whose header is cut short.
Result<std::string> folder_identity(const std::filesystem::path& folder);

}  // namespace dicebench::local
