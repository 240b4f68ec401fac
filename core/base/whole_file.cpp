// Reading a whole file with a one-line error (whole_file.hpp).
#include "core/base/whole_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace dicebench {

Result<std::string> read_whole_file(const std::filesystem::path& path, std::string_view what) {
  const auto failed = [&](std::string_view why) {
    return make_error(ErrorKind::io, "cannot read " + (what.empty() ? std::string() : std::string(what) + " ") +
                                         path.string() + ": " + std::string(why));
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return failed("it is a folder");
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return failed(std::strerror(errno));
  std::string bytes;
  char chunk[1 << 16];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) bytes.append(chunk, got);
  if (std::ferror(file.get())) return failed(errno ? std::strerror(errno) : "read error");
  return bytes;
}

}  // namespace dicebench
