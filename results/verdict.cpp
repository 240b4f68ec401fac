// Spelling of verdicts and run statuses as stored in SQL.
#include "results/verdict.hpp"

namespace dicebench::results {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::extraction_failed: return "extraction_failed";
    case Verdict::compile_failed: return "compile_failed";
    case Verdict::runtime_error: return "runtime_error";
    case Verdict::timeout: return "timeout";
    case Verdict::crashed: return "crashed";
    case Verdict::shape_mismatch: return "shape_mismatch";
    case Verdict::dtype_mismatch: return "dtype_mismatch";
    case Verdict::output_mismatch: return "output_mismatch";
    case Verdict::correct: return "correct";
  }
  return "unknown";
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (Verdict verdict : kAllVerdicts) {
    if (verdict_name(verdict) == name) return verdict;
  }
  return std::nullopt;
}

std::string_view run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::failed: return "failed";
  }
  return "unknown";
}

std::optional<RunStatus> parse_run_status(std::string_view name) {
  for (RunStatus status : {RunStatus::running, RunStatus::finished, RunStatus::interrupted, RunStatus::failed}) {
    if (run_status_name(status) == name) return status;
  }
  return std::nullopt;
}

}  // namespace dicebench::results
