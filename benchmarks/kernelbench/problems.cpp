// Loads the problem files of one KernelBench level folder.
#include "benchmarks/kernelbench/problems.hpp"

#include <algorithm>
#include <exception>
#include <optional>

#include "core/base/sha256.hpp"
#include "core/base/whole_file.hpp"

namespace dicebench::kernelbench {
namespace {

namespace fs = std::filesystem;

struct ParsedName {
  std::int64_t id;
  std::string name;
};

// "<digits>_<Name>.py" -> {id, Name}; nullopt for other names. Ids longer than 18 digits are
// reported as an error by the caller (they do not fit the id type).
std::optional<ParsedName> parse_problem_name(const std::string& file_name, bool* too_long) {
  *too_long = false;
  constexpr std::string_view kSuffix = ".py";
  if (file_name.size() <= kSuffix.size() ||
      file_name.compare(file_name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return std::nullopt;
  }
  const std::size_t underscore = file_name.find('_');
  if (underscore == 0 || underscore == std::string::npos) return std::nullopt;
  const std::string digits = file_name.substr(0, underscore);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  std::string name = file_name.substr(underscore + 1, file_name.size() - kSuffix.size() - underscore - 1);
  if (name.empty()) return std::nullopt;
  const std::size_t first_nonzero = digits.find_first_not_of('0');
  if (first_nonzero != std::string::npos && digits.size() - first_nonzero > 18) {
    *too_long = true;
    return std::nullopt;
  }
  std::int64_t id = 0;
  for (char c : digits) id = id * 10 + (c - '0');
  return ParsedName{id, std::move(name)};
}

}  // namespace

Result<std::vector<Problem>> load_level(const std::filesystem::path& levels_root, int level) {
  try {
    const std::string folder_name = "level" + std::to_string(level);
    std::error_code ec;
    fs::path folder = fs::absolute(levels_root / folder_name, ec);
    if (ec) folder = levels_root / folder_name;
    if (level < 1) return make_error("no KernelBench level " + std::to_string(level) + " (levels start at 1)");
    if (!fs::is_directory(folder, ec)) {
      return make_error("no " + folder_name + " folder under " + levels_root.string());
    }
    std::vector<Problem> problems;
    fs::directory_iterator it(folder, ec);
    if (ec) return make_error("cannot list " + folder.string() + ": " + ec.message());
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) return make_error("cannot list " + folder.string() + ": " + ec.message());
      const fs::path path = it->path();
      bool too_long = false;
      std::optional<ParsedName> parsed = parse_problem_name(path.filename().string(), &too_long);
      if (too_long) return make_error("problem id too large in " + path.string());
      if (!parsed) continue;
      std::error_code type_ec;
      if (!fs::is_regular_file(path, type_ec)) continue;
      Result<std::string> source = read_whole_file(path);
      if (!source) return source.error();
      Problem problem;
      problem.id = parsed->id;
      problem.level = level;
      problem.name = std::move(parsed->name);
      problem.path = path;
      problem.source = std::move(source.value());
      problem.content_hash = "sha256:" + sha256_hex(problem.source);
      problems.push_back(std::move(problem));
    }
    std::sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
      return a.id != b.id ? a.id < b.id : a.path.filename() < b.path.filename();
    });
    for (std::size_t i = 1; i < problems.size(); ++i) {
      if (problems[i].id == problems[i - 1].id) {
        return make_error("duplicate problem id " + std::to_string(problems[i].id) + " in " + folder.string() + ": " +
                          problems[i - 1].path.filename().string() + " and " + problems[i].path.filename().string());
      }
    }
    return problems;
  } catch (const std::exception& e) {
    return make_error("cannot load KernelBench level " + std::to_string(level) + " under " + levels_root.string() +
                      ": " + e.what());
  }
}

}  // namespace dicebench::kernelbench
