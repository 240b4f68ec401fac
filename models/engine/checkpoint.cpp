// Opening single-file and sharded safetensors checkpoints.
#include "models/engine/checkpoint.hpp"
#include "core/base/one_line.hpp"
#include "core/base/whole_file.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/base/text.hpp"

namespace dicebench::engine {

Result<Checkpoint> Checkpoint::open(const std::filesystem::path& folder) {
  Checkpoint checkpoint;
  checkpoint.folder_ = folder;
  const auto single = folder / "model.safetensors";
  const auto index = folder / "model.safetensors.index.json";
  if (std::filesystem::exists(index)) {
    checkpoint.index_ = index;
    auto text = read_whole_file(index);
    if (!text) return text.error();
    const auto doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    const auto map = doc.is_object() ? doc.find("weight_map") : doc.end();
    if (map == doc.end() || !map->is_object() || map->empty())
      return make_error(fmt::format("{}: no 'weight_map' object naming the shards", index.string()));
    std::map<std::string, size_t> file_index;
    for (const auto& [tensor, shard] : map->items()) {
      if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos)
        return make_error(fmt::format("{}: tensor '{}' maps to {}, not a file name in the folder", index.string(),
                                      on_one_line(tensor), shard.dump()));
      const auto name = shard.get<std::string>();
      auto [it, inserted] = file_index.emplace(name, checkpoint.files_.size());
      if (inserted) {
        auto file = SafetensorsFile::open(folder / name);
        if (!file) return file.error();
        checkpoint.files_.push_back(std::move(*file));
      }
      if (!checkpoint.files_[it->second].find(tensor))
        return make_error(fmt::format("{}: tensor '{}' missing (the index {} lists it there)", (folder / name).string(),
                                      on_one_line(tensor), index.filename().string()));
      checkpoint.file_of_tensor_.emplace(tensor, it->second);
    }
    return checkpoint;
  }
  if (!std::filesystem::exists(single))
    return make_error(fmt::format("{}: no model.safetensors nor model.safetensors.index.json", folder.string()));
  auto file = SafetensorsFile::open(single);
  if (!file) return file.error();
  for (const auto& [name, tensor] : file->tensors()) checkpoint.file_of_tensor_.emplace(name, 0);
  checkpoint.files_.push_back(std::move(*file));
  return checkpoint;
}

Result<Checkpoint::Found> Checkpoint::find(const std::string& name) const {
  const auto it = file_of_tensor_.find(name);
  if (it == file_of_tensor_.end()) {
    const auto where = index_.empty() ? files_.front().path() : index_;
    return make_error(fmt::format("{}: missing tensor '{}'", where.string(), name));
  }
  const auto& file = files_[it->second];
  return Found{file.find(name), &file};
}

}  // namespace dicebench::engine
