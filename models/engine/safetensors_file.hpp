// One safetensors file, memory-mapped: its header is parsed and every tensor's dtype, shape and
// byte range checked against the file before anything reads the data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "models/engine/mapped_file.hpp"

namespace dicebench::engine {

// The element types safetensors names; the engine reads the floating ones.
enum class StoredType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };
const char* stored_type_name(StoredType type);
size_t stored_type_size(StoredType type);

struct StoredTensor {
  std::string name;
  StoredType type = StoredType::F32;
  std::vector<int64_t> shape;
  std::span<const std::byte> data;  // inside the mapping
};

class SafetensorsFile {
 public:
  static Result<SafetensorsFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return mapping_->path(); }
  // nullptr when the file has no tensor of that name.
  const StoredTensor* find(const std::string& name) const;
  const std::map<std::string, StoredTensor>& tensors() const { return tensors_; }
  // Keeps the mapping alive for as long as someone reads tensor data.
  const std::shared_ptr<MappedFile>& mapping() const { return mapping_; }

 private:
  std::shared_ptr<MappedFile> mapping_;
  std::map<std::string, StoredTensor> tensors_;
};

}  // namespace dicebench::engine
