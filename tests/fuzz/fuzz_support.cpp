// The shared helpers of the fuzz targets (fuzz_support.hpp).
#include "tests/fuzz/fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace dicebench::fuzz {
namespace {

struct ScratchFolder {
  std::filesystem::path path;
  ScratchFolder() {
    std::error_code ec;
    path = std::filesystem::temp_directory_path(ec) / ("dicebench-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(path, ec);
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

const std::filesystem::path& scratch_folder() {
  static ScratchFolder folder;
  return folder.path;
}

std::filesystem::path write_scratch_file(const std::string& name, std::string_view contents) {
  const std::filesystem::path path = scratch_folder() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  check(static_cast<bool>(out), "cannot write the scratch file " + path.string());
  return path;
}

void clear_scratch_folder() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(scratch_folder(), ec))
    std::filesystem::remove_all(entry.path(), ec);
}

std::pair<std::string_view, std::string_view> split_at_nul(std::string_view input) {
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos) return {input, {}};
  return {input.substr(0, nul), input.substr(nul + 1)};
}

void check(bool condition, std::string_view what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

void check_one_line(std::string_view message) {
  check(!message.empty(), "an error without a message");
  check(message.find('\n') == std::string_view::npos, "an error of several lines: " + std::string(message));
}

}  // namespace dicebench::fuzz
