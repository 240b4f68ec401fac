// A model folder's weights: model.safetensors, or the shards listed in
// model.safetensors.index.json, all memory-mapped; tensors are looked up by name.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "models/engine/safetensors_file.hpp"

namespace dicebench::engine {

class Checkpoint {
 public:
  static Result<Checkpoint> open(const std::filesystem::path& folder);

  struct Found {
    const StoredTensor* tensor;
    const SafetensorsFile* file;
  };
  // An error naming the file where the tensor should be (or the folder) when it is missing.
  Result<Found> find(const std::string& name) const;
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  std::filesystem::path folder_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, size_t> file_of_tensor_;  // name -> index in files_
  std::filesystem::path index_;                   // the index file, when sharded
};

}  // namespace dicebench::engine
