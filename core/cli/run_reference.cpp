// Parsing run references, loading the runs they name, and writing command output files.
#include "core/cli/run_reference.hpp"
#include "core/base/number_text.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "results/report/summary_file.hpp"
#include "results/store/store.hpp"

namespace dicebench::cli {
namespace {

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() < 19 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

Result<RunReference> parse_run_reference(const std::string& text, const std::string& default_database,
                                         bool allow_summary) {
  RunReference reference;
  reference.text = text;
  if (all_digits(text)) {
    const auto run = parse_number<std::int64_t>(text, 1);
    if (!run) return make_error(fmt::format("'{}' is no run id (a run id is from 1 to {})", text, INT64_MAX));
    reference.database = default_database;
    reference.run = *run;
    return reference;
  }
  const auto colon = text.rfind(':');
  if (colon != std::string::npos && colon > 0 && all_digits(text.substr(colon + 1))) {
    const auto run = parse_number<std::int64_t>(text.substr(colon + 1), 1);
    if (!run)
      return make_error(fmt::format("'{}' is no run id (a run id is from 1 to {})", text.substr(colon + 1), INT64_MAX));
    reference.database = text.substr(0, colon);
    reference.run = *run;
    return reference;
  }
  if (allow_summary && std::filesystem::is_regular_file(text)) {
    reference.summary_file = text;
    return reference;
  }
  std::error_code ec;
  if (allow_summary && std::filesystem::is_directory(text, ec))
    return make_error(fmt::format("'{}' is a folder, not a run (give RUN, DATABASE:RUN or a run summary file)", text));
  if (allow_summary && (text.find('/') != std::string::npos || text.ends_with(".json")))
    return make_error(
        fmt::format("'{}' is not a run, and no such file exists (give RUN, DATABASE:RUN or a run summary file)", text));
  return make_error(fmt::format("'{}' is not a run (give RUN, DATABASE:RUN{})", text,
                                allow_summary ? " or an existing run summary file" : ""));
}

Result<results::RunResults> load_run(const RunReference& reference, results::LoadOptions options) {
  if (!reference.summary_file.empty()) return results::read_summary(reference.summary_file);
  auto store = results::Store::open(reference.database, results::OpenMode::ReadOnly);
  if (!store.ok()) return store.error();
  return results::load_run_results(*store, reference.run, options);
}

Result<void> check_output_path(const std::string& path) {
  if (path == "-") return {};
  if (path.empty()) return make_error("cannot write an output file with an empty name");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return make_error(fmt::format("cannot write {}: it is a folder", path));
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string folder = parent.empty() ? "." : parent.string();
  if (!std::filesystem::is_directory(folder, ec))
    return make_error(fmt::format("cannot write {}: no folder {}", path, folder));
  if (::access(folder.c_str(), W_OK) != 0)
    return make_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  return {};
}

Result<void> write_output(const std::string& path, const std::string& text) {
  DICEBENCH_TRY(check_output_path(path));
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return {};
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    out << text;
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      return make_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    return make_error(fmt::format("cannot write {}: {}", path, why));
  }
  return {};
}

}  // namespace dicebench::cli
