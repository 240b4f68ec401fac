// Published KernelBench baseline timings (KernelBench's results/timing/<hardware>/baseline_time_*.json,
// `{"level1": {"1_Square_matrix_multiplication_.py": {"mean", "std", "min", "max", "num_trials",
// "hardware", "device"}}}`, times in ms): reading such a file, re-deriving a run's speedups against
// it (so report, gate and export give fast_p as a paper computed it), and writing our own measured
// baselines in the same format (`dicebench baselines export`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/result.hpp"
#include "results/store/run_results.hpp"

namespace dicebench::results {

class Store;

// One problem's published timing.
struct PublishedTiming {
  double mean_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0;
  std::int64_t trials = 0;
  std::string hardware, device;
};

struct PublishedBaselines {
  std::string source;    // the file as given
  std::string hardware;  // the entries' "hardware" (distinct values joined by ", "), or "unknown"
  // by level, then KernelBench's problem file name ("<id>_<Name>.py")
  std::map<int, std::map<std::string, PublishedTiming>> timings;
};

// Errors (one line naming the file and the entry): not JSON, a key other than "level<N>", an entry
// that is not an object with a positive number "mean".
Result<PublishedBaselines> read_published_baselines(const std::string& path);

// The key a problem has in such a file: "<problem_id>_<name>.py", as KernelBench names its files.
std::string published_problem_file(const ProblemRow& problem);

// What a run's re-derivation against a file covered.
struct PublishedCoverage {
  std::string source, hardware;
  std::int64_t problems = 0;        // problems of the run
  std::vector<ProblemRow> covered;  // problems the file has
  std::vector<ProblemRow> missing;  // problems the file lacks: their samples get no speedup
};

// Re-derives every sample's speedup against the file, KernelBench's way: speedup = published mean /
// the candidate's mean time (runtime_mean_ms, else runtime_ms) for a correct, timed sample;
// baseline_ms and baseline_mean_ms become the published mean. Samples of a problem the file lacks
// lose their baseline and speedup (nothing is guessed) and the problem is listed as missing.
PublishedCoverage apply_published_baselines(RunResults& run, const PublishedBaselines& baselines);

// "published baselines FILE (HARDWARE): N of M problems; not in the file (no speedup): 1/5 Name, ...";
// as JSON, with the problems covered and missing listed (level, problem_id, name, file).
std::string format_coverage(const PublishedCoverage& coverage);
nlohmann::json coverage_json(const PublishedCoverage& coverage);

// Our measured baselines in KernelBench's format: for every problem of any run whose content hash
// has a cached baseline on a device matching `device` ("cuda": any GPU; "cpu"; or an exact device
// name) and timed by `method` ("eager" or "compile"), keyed by the problem's level and file name;
// of several baselines for one problem, the newest. Errors when baselines of several GPUs match
// "cuda" (naming them, so the caller can pick one by name) or when none match.
Result<nlohmann::json> export_published_baselines(Store& store, const std::string& device, const std::string& method);

}  // namespace dicebench::results
