// A read-only memory mapping of a whole file (checkpoints are mapped, never read into memory).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "core/base/result.hpp"

namespace dicebench::engine {

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::filesystem::path path_;
  const std::byte* data_;
  size_t size_;
};

}  // namespace dicebench::engine
