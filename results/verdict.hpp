// The fixed vocabularies stored in the results database: evaluation verdicts (evaluations.status)
// and run statuses (runs.status), with their exact spelling in SQL. The one definition of verdicts:
// the harness's client and the Python module use these, the worker's names are checked against them.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace dicebench::results {

enum class Verdict {
  extraction_failed,
  compile_failed,
  runtime_error,
  timeout,
  crashed,
  shape_mismatch,
  dtype_mismatch,
  output_mismatch,
  correct,
};

inline constexpr std::array<Verdict, 9> kAllVerdicts = {
    Verdict::extraction_failed, Verdict::compile_failed, Verdict::runtime_error,
    Verdict::timeout,           Verdict::crashed,        Verdict::shape_mismatch,
    Verdict::dtype_mismatch,    Verdict::output_mismatch, Verdict::correct,
};

// The verdicts a comparison of outputs gives (the reference worker's reference.compared), and those
// a candidate worker's failed reply names as its error_class; protocol.py's VERDICTS and
// CANDIDATE_ERROR_CLASSES, which tests/results/test_vocabulary.cpp checks against these.
inline constexpr std::array<Verdict, 4> kComparisonVerdicts = {
    Verdict::correct, Verdict::shape_mismatch, Verdict::dtype_mismatch, Verdict::output_mismatch};
inline constexpr std::array<Verdict, 2> kCandidateFailureVerdicts = {Verdict::compile_failed, Verdict::runtime_error};

// The names are the SQL spelling (the evaluations.status CHECK, which test_vocabulary checks too).
std::string_view verdict_name(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view name);

enum class RunStatus { running, finished, interrupted, failed };

std::string_view run_status_name(RunStatus status);
std::optional<RunStatus> parse_run_status(std::string_view name);

}  // namespace dicebench::results
