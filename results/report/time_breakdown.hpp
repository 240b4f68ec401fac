// Where a run's evaluation time went, read from what its evaluations stored (details.seconds, the
// GPU's time on each candidate; details.phases; details.latency_seconds; details.toolchain): per
// level, the GPU's time by phase group (waiting for loads, split by compile path; the reference;
// correctness trials; timing; fast-path evaluations that torch's toolchain re-judged), the
// toolchain pool's builds beside it, the timing loops' time per call (details.timed_calls), and the
// slowest candidates with the reason. `dicebench run`
// prints it after evaluating, `dicebench report` with --time, and both carry it in JSON.
#pragma once

#include "core/base/result.hpp"
#include "core/spec/vocabulary.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dicebench::results {

// The group a re-judged fast-path evaluation's phases (kPhaseRejudgedPrefix) count in.
inline constexpr std::string_view kRejudgedGroup = "rejudged";
// The groups of a run's time breakdown, in order: the phase groups (kPhaseGroups), then rejudged.
std::vector<std::string_view> time_groups();

class Store;

struct LevelTime {
  int level = 0;  // 0: every level
  int64_t candidates = 0;
  double gpu_seconds = 0;                           // sum of details.seconds
  std::map<std::string, double> groups;             // by time_groups() name, and "other"
  std::map<std::string, double> load_wait_by_path;  // load_wait by compile path (nvrtc, fallback, mixed, none)
  double latency_median = 0, latency_mean = 0, latency_max = 0;  // submission to final verdict
  int64_t rejudged = 0;                                          // candidates torch's toolchain judged again
  int64_t builds = 0, build_cache_hits = 0, build_failures = 0;  // the toolchain pool's, for this level's candidates
  double build_seconds = 0, build_queue_seconds = 0;
  // The candidates' timing loops (details.timed_calls): calls, and their wall time, of which the
  // reference's input batches and comparisons (the candidate waits for both).
  int64_t timed_calls = 0;
  double timing_loop_seconds = 0, timing_batches_seconds = 0, timing_compares_seconds = 0;
};

struct SlowCandidate {
  int level = 0;
  int64_t problem_id = 0;
  int sample_index = 0;
  std::string verdict, compile_path;
  double latency_seconds = 0, gpu_seconds = 0;
  std::string reason;  // what its time went to
};

struct TimeBreakdown {
  std::vector<LevelTime> levels;  // by level
  LevelTime total;
  std::vector<SlowCandidate> slowest;  // by latency, longest first
};

// The breakdown of run `run`'s evaluations (those stored without the figures, by an older
// dicebench, count as candidates and add nothing else).
Result<TimeBreakdown> time_breakdown(Store& store, int64_t run, size_t slowest = 5);
std::string format_time_breakdown(const TimeBreakdown& breakdown);
nlohmann::json time_breakdown_json(const TimeBreakdown& breakdown);

}  // namespace dicebench::results
