// How commands name a run: "RUN" (an id in the --db database), "DATABASE:RUN" (a run in another
// database file), or, where a command accepts one, the path of a run summary file written by
// `dicebench export --format summary`.
#pragma once

#include <string>

#include "core/base/result.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::cli {

struct RunReference {
  std::string database;  // empty: a summary file
  std::int64_t run = 0;
  std::string summary_file;
  std::string text;  // as given
};

// Errors: "'X' is not a run ..." when `text` names neither a run nor (with allow_summary) a file.
Result<RunReference> parse_run_reference(const std::string& text, const std::string& default_database,
                                         bool allow_summary);

// Opens the database read-only (or reads the summary file) and loads the run's results.
Result<results::RunResults> load_run(const RunReference& reference, results::LoadOptions options = {});

// Writes `text` to `path` through a temporary file renamed into place, so a failed write leaves
// any earlier file intact; "-" writes to standard output.
Result<void> write_output(const std::string& path, const std::string& text);

// Whether write_output(path, ...) can succeed, asked before long work whose summary goes there: a
// path that is empty or a folder, or whose folder is missing or not writable, is one error line
// ("cannot write PATH: why").
Result<void> check_output_path(const std::string& path);

}  // namespace dicebench::cli
