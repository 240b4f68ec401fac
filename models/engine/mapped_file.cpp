// mmap(2) of a checkpoint file, unmapped when the last reference goes.
#include "models/engine/mapped_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dicebench::engine {

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("{}: {}", path.string(), std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return make_error(fmt::format("{}: not a regular file", path.string()));
  }
  const auto size = static_cast<size_t>(info.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return make_error(fmt::format("{}: cannot map: {}", path.string(), std::strerror(error)));
    }
  }
  ::close(fd);
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<const std::byte*>(data), size));
}

MappedFile::~MappedFile() {
  if (size_ > 0) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace dicebench::engine
