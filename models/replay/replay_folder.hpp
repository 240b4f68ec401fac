// A replay folder: stored completions indexed by (level, problem, sample), scanned once when
// opened. Serves the replay model plugin and is used directly by tests. Every failure is a
// one-line Error naming the folder (and the file or sample concerned).
#pragma once

#include "core/base/result.hpp"
#include "models/replay/replay_file_name.hpp"

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace dicebench::replay {

class ReplayFolder {
 public:
  struct Entry {
    std::string name;  // file name inside the folder
    FileKind kind = FileKind::kernel;
  };
  struct Sample {
    std::string file_name;
    std::string text;
    FileKind kind = FileKind::kernel;
  };

  // Scans `folder`. Fails when it is missing, not a directory, unreadable, holds no
  // recognised file, or holds both kinds of file for one sample.
  static Result<ReplayFolder> open(const std::filesystem::path& folder);

  // The folder as an absolute, normalised path.
  const std::filesystem::path& path() const { return path_; }
  // Number of recognised files.
  size_t file_count() const { return files_.size(); }
  const std::map<SampleKey, Entry>& files() const { return files_; }
  // Names of the folder's other entries (sorted), which the replay ignores.
  const std::vector<std::string>& ignored() const { return ignored_; }

  // The file that stores `key`, or nullptr.
  const Entry* find(const SampleKey& key) const;

  // Problems of `level` with their number of samples. Fails when the level has no file or a
  // problem's sample indices are not exactly 0..n-1.
  Result<std::map<int64_t, int32_t>> stored_samples(int32_t level) const;

  // Succeeds when every key has a file; else names the first missing ones and the total.
  Result<void> check_available(std::span<const SampleKey> keys) const;

  // Reads the file that stores `key` now (it may have changed or vanished since open).
  Result<Sample> read(const SampleKey& key) const;

  // SHA-256 (hex) identifying the folder's recognised content: over the lines
  // "<file name>\t<sha256 hex of its bytes>\n" in byte order of the names.
  Result<std::string> content_sha256() const;

 private:
  std::filesystem::path path_;
  std::map<SampleKey, Entry> files_;
  std::vector<std::string> ignored_;
};

}  // namespace dicebench::replay
