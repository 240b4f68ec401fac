// Whole-file reads with one-line errors naming the file.
#include "benchmarks/kernelbench/file_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace dicebench::kernelbench {

Result<std::string> read_file_bytes(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error("cannot read " + path.string() + ": it is a directory");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return make_error("cannot read " + path.string() + ": " + std::strerror(errno));
  std::string contents;
  char chunk[65536];
  while (true) {
    const std::size_t got = std::fread(chunk, 1, sizeof chunk, file.get());
    contents.append(chunk, got);
    if (got < sizeof chunk) {
      if (std::ferror(file.get())) {
        return make_error("cannot read " + path.string() + ": " + std::strerror(errno));
      }
      break;
    }
  }
  return contents;
}

std::string universal_newlines(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    } else {
      out.push_back(bytes[i]);
    }
  }
  return out;
}

}  // namespace dicebench::kernelbench
