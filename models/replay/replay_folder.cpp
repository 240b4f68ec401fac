// Scanning, checking and reading a replay folder (see replay_folder.hpp).
#include "models/replay/replay_folder.hpp"
#include "core/base/whole_file.hpp"

#include "core/base/sha256.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

namespace dicebench::replay {
namespace {

namespace fs = std::filesystem;

// "0,1,3" or, for long runs, "0-9,11".
std::string list_indices(const std::vector<int32_t>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j - i >= 2) {
      out += std::to_string(sorted[i]) + "-" + std::to_string(sorted[j]);
    } else {
      for (size_t k = i; k <= j; ++k) out += (k == i ? "" : ",") + std::to_string(sorted[k]);
    }
    i = j + 1;
  }
  return out;
}

fs::path absolute_folder(const fs::path& folder) {
  std::error_code ec;
  fs::path path = fs::absolute(folder, ec);
  if (ec) path = folder;
  path = path.lexically_normal();
  if (!path.has_filename() && path.has_parent_path() && path != path.root_path()) path = path.parent_path();
  return path;
}

}  // namespace

Result<ReplayFolder> ReplayFolder::open(const fs::path& folder) {
  ReplayFolder result;
  result.path_ = absolute_folder(folder);
  const std::string where = "replay folder " + result.path_.string();
  const std::string expected = std::string("expected files named ") + std::string(kExpectedNames);

  std::error_code ec;
  const fs::file_status status = fs::status(result.path_, ec);
  if (ec && status.type() != fs::file_type::not_found)
    return make_error("cannot access " + where + ": " + ec.message());
  if (!fs::exists(status)) return make_error(where + " does not exist (" + expected + ")");
  if (!fs::is_directory(status)) return make_error(where + " is not a directory (" + expected + ")");

  std::vector<std::string> names;
  fs::directory_iterator it(result.path_, ec), end;
  if (ec) return make_error("cannot list " + where + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& entry = *it;
    std::error_code kind_ec;
    const bool regular = entry.is_regular_file(kind_ec);  // follows symbolic links
    const std::string name = entry.path().filename().string();
    if (regular && parse_file_name(name)) {
      names.push_back(name);
    } else {
      result.ignored_.push_back(name);
    }
  }
  if (ec) return make_error("cannot list " + where + ": " + ec.message());
  std::sort(names.begin(), names.end());
  std::sort(result.ignored_.begin(), result.ignored_.end());

  for (const std::string& name : names) {
    const ParsedFileName parsed = *parse_file_name(name);
    const auto [at, inserted] = result.files_.try_emplace(parsed.key, Entry{name, parsed.kind});
    if (!inserted)
      return make_error(where + " has two files for " + describe(parsed.key) + ": " + at->second.name + " and " + name +
                        " (keep one)");
  }
  if (result.files_.empty()) {
    std::string message = where + " holds no replay files (" + expected + ")";
    if (!result.ignored_.empty())
      message += "; its " + std::to_string(result.ignored_.size()) + " other entries are ignored";
    return make_error(message);
  }
  return result;
}

const ReplayFolder::Entry* ReplayFolder::find(const SampleKey& key) const {
  const auto it = files_.find(key);
  return it == files_.end() ? nullptr : &it->second;
}

Result<std::map<int64_t, int32_t>> ReplayFolder::stored_samples(int32_t level) const {
  const std::string where = "replay folder " + path_.string();
  std::map<int64_t, std::vector<int32_t>> samples;  // keys are sorted, so indices come sorted
  std::set<int32_t> levels;
  for (const auto& [key, entry] : files_) {
    levels.insert(key.level);
    if (key.level == level) samples[key.problem_id].push_back(key.sample_index);
  }
  if (samples.empty()) {
    std::string held;
    for (int32_t l : levels) held += (held.empty() ? "" : ", ") + std::to_string(l);
    return make_error(where + " has no files for level " + std::to_string(level) + " (it holds level" +
                      (levels.size() == 1 ? " " : "s ") + held + ")");
  }

  std::map<int64_t, int32_t> counts;
  std::string first_gap;
  size_t gaps = 0;
  for (const auto& [problem, indices] : samples) {
    const auto n = static_cast<int32_t>(indices.size());
    if (indices.back() != n - 1) {  // sorted and distinct: 0..n-1 exactly when the last is n-1
      if (gaps++ == 0) {
        std::vector<int32_t> missing;
        for (int32_t i = 0, k = 0; i <= indices.back() && missing.size() < 20; ++i) {
          if (indices[static_cast<size_t>(k)] == i)
            ++k;
          else
            missing.push_back(i);
        }
        first_gap = "level " + std::to_string(level) + " problem " + std::to_string(problem) + " has samples " +
                    list_indices(indices) + " (missing " + list_indices(missing) +
                    (missing.size() == 20 ? ",..." : "") + ")";
      }
      continue;
    }
    counts[problem] = n;
  }
  if (gaps > 0) {
    std::string message = where + " has a gap: " + first_gap;
    if (gaps > 1) message += "; " + std::to_string(gaps - 1) + " more problems of that level have gaps";
    return make_error(message);
  }
  return counts;
}

Result<void> ReplayFolder::check_available(std::span<const SampleKey> keys) const {
  std::set<SampleKey> missing;
  std::vector<SampleKey> first;  // in request order
  size_t wanted = 0;
  std::set<SampleKey> seen;
  for (const SampleKey& key : keys) {
    if (!seen.insert(key).second) continue;
    ++wanted;
    if (files_.count(key) == 0 && missing.insert(key).second && first.size() < 3) first.push_back(key);
  }
  if (missing.empty()) return {};
  std::string message = "replay folder " + path_.string() + " lacks " + std::to_string(missing.size()) + " of " +
                        std::to_string(wanted) + " requested samples: ";
  for (size_t i = 0; i < first.size(); ++i) message += (i ? ", " : "") + describe(first[i]);
  if (missing.size() > first.size()) message += " and " + std::to_string(missing.size() - first.size()) + " more";
  message +=
      " (expected " + file_name(first[0], FileKind::kernel) + " or " + file_name(first[0], FileKind::completion) + ")";
  return make_error(message);
}

Result<ReplayFolder::Sample> ReplayFolder::read(const SampleKey& key) const {
  const Entry* entry = find(key);
  if (!entry)
    return make_error("replay folder " + path_.string() + " has no file for " + describe(key) + " (expected " +
                      file_name(key, FileKind::kernel) + " or " + file_name(key, FileKind::completion) + ")");
  auto bytes = read_whole_file(path_ / entry->name, "replay file");
  if (!bytes) return bytes.error();
  return Sample{entry->name, std::move(bytes).value(), entry->kind};
}

Result<std::string> ReplayFolder::content_sha256() const {
  std::vector<const Entry*> entries;
  entries.reserve(files_.size());
  for (const auto& [key, entry] : files_) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) { return a->name < b->name; });
  std::string listing;
  for (const Entry* entry : entries) {
    auto bytes = read_whole_file(path_ / entry->name, "replay file");
    if (!bytes) return bytes.error();
    listing += entry->name + '\t' + sha256_hex(*bytes) + '\n';
  }
  return sha256_hex(listing);
}

}  // namespace dicebench::replay
