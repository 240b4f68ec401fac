// A run summary file: a run's record, problems and per-sample results (no sources) as one
// versioned JSON document, written by `dicebench export --format summary` and read back as a
// gate baseline or a comparison side, e.g. committed next to the code under test.
#pragma once

#include <filesystem>
#include <string>

#include "core/base/result.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::results {

inline constexpr const char* kSummaryFormat = "dicebench-run-summary";
// 2: problems carry "traits", samples "margin", "memory_floor_ms", "flags", "flag_details",
// "problem_traits" and "failed_stage". Files of format 1 still read (those read as absent).
inline constexpr int kSummaryFormatVersion = 2;

// {"format": "dicebench-run-summary", "version": 2, "run": {...}, "problems": [{..., "traits"}],
//  "samples": [sample_record...], "report": report_json (informative only)}
std::string write_summary(const RunResults& run);

// Errors, each naming the file: unreadable, not JSON, not a run summary, a version newer than
// this build reads, a malformed record.
Result<RunResults> read_summary(const std::filesystem::path& path);

}  // namespace dicebench::results
