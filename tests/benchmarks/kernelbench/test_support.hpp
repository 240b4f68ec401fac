// Helpers for the KernelBench tests: scratch folders, file I/O, and a string comparison that
// reports the first differing byte offset.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include <unistd.h>

namespace kbtest {

namespace fs = std::filesystem;

inline fs::path data_dir() { return fs::path(DICEBENCH_TEST_DATA_DIR) / "kernelbench"; }

// A fresh folder under the system temp dir, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "dicebench-kb-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    // Restore permissions a test may have removed, so that removal succeeds.
    for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const fs::path& path, std::string_view contents) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

inline std::string escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out.push_back(c);
  }
  return out;
}

// "" when equal; otherwise where they first differ, with a little context from each side.
inline std::string first_difference(std::string_view expected, std::string_view actual) {
  if (expected == actual) return "";
  std::size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  const std::size_t from = i > 40 ? i - 40 : 0;
  std::ostringstream out;
  out << "first difference at byte offset " << i << " (expected " << expected.size() << " bytes, got " << actual.size()
      << ")\n  expected: ..." << escaped(expected.substr(from, i - from)) << "[[" << escaped(expected.substr(i, 40))
      << "]]\n  actual:   ..." << escaped(actual.substr(from, i - from)) << "[[" << escaped(actual.substr(i, 40))
      << "]]";
  return out.str();
}

// Copies the test data's problem and prompt files to `to` (a KernelBench-like folder).
inline void copy_test_data(const fs::path& to) {
  fs::create_directories(to);
  fs::copy(data_dir(), to, fs::copy_options::recursive);
}

}  // namespace kbtest

// Checks two strings for equality, reporting the first differing offset on failure.
#define KB_CHECK_SAME_TEXT(expected, actual)                                           \
  do {                                                                                 \
    const std::string kb_difference_ = kbtest::first_difference((expected), (actual)); \
    CHECK_MESSAGE(kb_difference_.empty(), kb_difference_);                             \
  } while (0)
