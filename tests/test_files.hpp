// Files for tests: a temporary folder removed at the end, writing and reading a file (its folders
// made), a file's hash, and the single value of a one-cell query on a results database.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

#include "core/base/sha256.hpp"
#include "core/base/text.hpp"
#include "core/base/whole_file.hpp"
#include "results/store/query.hpp"

namespace dicebench::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("dicebench-test-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

inline void write(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The file's bytes; a file that cannot be read fails the test, naming it and why.
inline std::string read_text(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  REQUIRE_MESSAGE(text.ok(), (text.ok() ? "" : text.error().message));
  return std::move(*text);
}

inline std::string file_hash(const std::string& path) { return sha256_hex(read_whole_file(path).value_or("")); }

// The single value of a one-cell query, as text, read through the CLI's query code path.
inline std::string scalar(const std::string& db, const std::string& sql) {
  auto r = results::run_query(db, sql);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  REQUIRE(r->rows.size() == 1);
  REQUIRE(r->rows[0].size() == 1);
  const auto& cell = r->rows[0][0];
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* t = std::get_if<std::string>(&cell)) return *t;
  if (const auto* d = std::get_if<double>(&cell)) return std::to_string(*d);
  return "NULL";
}

}  // namespace dicebench::test
