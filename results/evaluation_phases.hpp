// The phases an evaluation's wall time is recorded by (Evaluation::phases, stored in
// evaluations.details.phases), and the groups a run's time breakdown sums them into
// (time_breakdown.hpp). The one definition: the evaluator records these names and no other, and
// tests/results/test_evaluation_fields.cpp checks that every phase has exactly one group.
#pragma once

#include <array>
#include <string_view>

namespace dicebench::results::phases {

inline constexpr const char* kSlotWait = "slot_wait";         // the GPU waited for this candidate's load, nothing else ready
inline constexpr const char* kCompileWait = "compile_wait";   // what was left of its load when it was judged
inline constexpr const char* kPrepare = "prepare";            // the reference built (or copied) for the job
inline constexpr const char* kProblemChecks = "problem_checks";  // the problem's traits and the device's bandwidth, once
inline constexpr const char* kInit = "init";                  // ModelNew built
inline constexpr const char* kTrials = "trials";              // the correctness trials
inline constexpr const char* kTiming = "timing";              // timing on fresh inputs
inline constexpr const char* kAfterTiming = "after_timing";   // the checked call after timing
inline constexpr const char* kBaseline = "baseline";          // the reference timed (once a problem)
// A fast-path evaluation that torch's toolchain then judged again keeps its phases under this prefix.
inline constexpr std::string_view kRejudgedPrefix = "fastpath_";

inline constexpr std::array<const char*, 9> kAll = {kSlotWait, kCompileWait, kPrepare, kProblemChecks, kInit,
                                                    kTrials,   kTiming,      kAfterTiming, kBaseline};

// A group of phases in a run's time breakdown; a phase named "fastpath_*" is matched by prefix.
struct Group {
  std::string_view name;
  std::string_view meaning;
  std::array<std::string_view, 3> phases;  // "" pads
};
inline constexpr std::array<Group, 5> kGroups = {{
    {"load_wait", "the GPU waiting for a candidate's load (worker start, compile), nothing else ready", {kSlotWait, kCompileWait, ""}},
    {"reference", "the reference: its build, the problem's checks, the baseline", {kPrepare, kProblemChecks, kBaseline}},
    {"trials", "building ModelNew and the correctness trials", {kInit, kTrials, ""}},
    {"timing", "timing on fresh inputs, and the check after it", {kTiming, kAfterTiming, ""}},
    {"rejudged", "fast-path evaluations that torch's toolchain then judged again", {"fastpath_*", "", ""}},
}};

}  // namespace dicebench::results::phases
