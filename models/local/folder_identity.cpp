// The model folder's identity hash: JSON files whole, safetensors files by their headers.
#include "models/local/folder_identity.hpp"
#include "core/base/whole_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"

namespace dicebench::local {
namespace fs = std::filesystem;
namespace {

constexpr const char* kJsonFiles[] = {"config.json", "generation_config.json", "tokenizer.json",
                                      "tokenizer_config.json", "model.safetensors.index.json"};

void add_part(Sha256& hash, std::string_view label, std::string_view content) {
  hash.update(fmt::format("{}\n{}\n", label, content.size()));
  hash.update(content);
}

// The 8-byte little-endian header length and the JSON header after it.
Result<std::string> safetensors_header(const fs::path& path, uintmax_t size) {
  std::ifstream in(path, std::ios::binary);
  unsigned char length_bytes[8] = {};
  if (!in.read(reinterpret_cast<char*>(length_bytes), 8))
    return make_error(fmt::format("{}: cannot read the safetensors header length", path.string()));
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | length_bytes[i];
  if (length > size - 8)
    return make_error(
        fmt::format("{}: header length {} runs past the end of the file ({} bytes)", path.string(), length, size));
  std::string header(static_cast<size_t>(length), '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(length)))
    return make_error(fmt::format("{}: cannot read its {}-byte header", path.string(), length));
  return header;
}

}  // namespace

Result<std::string> folder_identity(const fs::path& folder) {
  Sha256 hash;
  std::error_code ec;
  for (const char* name : kJsonFiles) {
    const fs::path path = folder / name;
    if (!fs::exists(path, ec)) continue;
    auto text = read_whole_file(path);
    if (!text) return text.error();
    add_part(hash, name, *text);
  }
  std::vector<fs::path> weights;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".safetensors") weights.push_back(entry.path());
  if (ec) return make_error(fmt::format("{}: {}", folder.string(), ec.message()));
  std::sort(weights.begin(), weights.end());
  for (const auto& path : weights) {
    const uintmax_t size = fs::file_size(path, ec);  // follows the cache's symlinks to blobs
    if (ec || size < 8)
      return make_error(fmt::format("{}: not a safetensors file ({})", path.string(), ec ? ec.message() : "too short"));
    auto header = safetensors_header(path, size);
    if (!header) return header.error();
    add_part(hash, fmt::format("{} {}", path.filename().string(), size), *header);
  }
  return "sha256:" + hash.hex();
}

}  // namespace dicebench::local
