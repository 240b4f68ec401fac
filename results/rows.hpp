// Plain structs for what the results store writes and reads: runs, problems, samples and
// evaluations, one struct per table shape (New* for inserts, *Row for what comes back).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/problem_key.hpp"
#include "results/flags.hpp"
#include "results/verdict.hpp"

namespace dicebench::results {

struct NewRun {
  std::string model;
  std::string suite;
  std::string config_json = "{}";  // the resolved configuration
  std::string dicebench_version;
  std::string git_sha;
  std::string host;
  std::optional<std::string> gpu;
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;
  std::optional<std::string> torch_version;
  std::int64_t seed = 0;
  std::string repro_json = "{}";  // the reproducibility record
};

struct RunRow {
  std::int64_t id = 0;
  std::string created;                  // UTC, "2026-11-29T15:42:52Z"
  std::optional<std::string> finished;  // set by finish_run
  RunStatus status = RunStatus::running;
  std::string model;
  std::string suite;
  std::string config_json;
  std::string dicebench_version;
  std::string git_sha;
  std::string host;
  std::optional<std::string> gpu;
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;
  std::optional<std::string> torch_version;
  std::int64_t seed = 0;
  std::string repro_json;
};

struct ProblemRow {
  std::int64_t problem_id = 0;
  int level = 0;
  std::string name;
  std::string path;
  std::string content_hash;
  std::string prompt_hash;
  // The problem's degenerate traits as a JSON array of trait names (results/flags.hpp); absent
  // until the evaluation stage has checked the problem. add_problems ignores it (set_problem_traits).
  std::optional<std::string> traits_json;
  ProblemKey key() const { return {level, problem_id}; }
};

struct NewSample {
  std::int64_t run = 0;
  int level = 0;
  std::int64_t problem_id = 0;
  int sample_index = 0;
  std::string prompt_hash;
  std::string completion;
  std::optional<std::string> candidate;  // absent: no code block (extraction 'no_code_block')
  std::string gen_stats_json = "{}";
  // What the suite measured about the answer (a JSON object; dicebench/extraction_details.hpp), when
  // its extraction says (ABI 1.3's optional_extract_problem): samples.extraction_details.
  std::optional<std::string> extraction_details_json;
};

struct SampleRow {
  std::int64_t id = 0;
  std::int64_t run = 0;
  int level = 0;
  std::int64_t problem_id = 0;
  int sample_index = 0;
  std::string prompt_hash;
  std::optional<std::string> completion;  // only when asked for
  std::optional<std::string> candidate;
  std::string extraction;  // 'ok' or 'no_code_block'
  std::string gen_stats_json;
  std::string created;
};

// Device work of one timed call, per kernel (or memcpy/memset) name and launch shape.
struct KernelRow {
  std::string name;
  std::string kind = "kernel";  // 'kernel', 'memcpy' or 'memset'
  bool from_candidate = false;   // compiled from the candidate's own source
  double launches_per_call = 0;
  double ms_per_call = 0;
  std::string grid, block;       // "x,y,z"; empty for memcpy/memset
};

// A flag that qualifies a verdict, with what it saw ("0.012 ms, floor 0.050 ms").
struct FlagRow {
  EvaluationFlag flag = EvaluationFlag::borderline;
  std::string detail;
};

// One evaluation of a sample. Times are milliseconds; runtime_ms and baseline_ms are medians;
// speedup = baseline median / candidate median.
struct NewEvaluation {
  std::int64_t sample = 0;
  Verdict status = Verdict::extraction_failed;
  bool compiled = false;
  bool correct = false;
  std::string device;
  std::optional<double> runtime_ms;
  std::optional<double> runtime_mean_ms;
  std::optional<double> runtime_std_ms;
  std::optional<double> runtime_min_ms;
  std::optional<double> runtime_max_ms;
  std::optional<double> runtime_p10_ms;
  std::optional<double> runtime_p90_ms;
  std::optional<double> baseline_ms;
  std::optional<double> baseline_mean_ms;
  std::optional<double> speedup;
  std::optional<double> speedup_mean;
  std::optional<std::string> error_class;
  std::optional<std::string> error_message;
  std::string details_json = "{}";
  // How the candidate was compiled: 'nvrtc' (the fast path), 'fallback' (torch's toolchain),
  // 'mixed' (some of each), 'none' (no extension built); why, how long, and the compiler's log.
  std::optional<std::string> compile_path;
  std::optional<std::string> compile_reason;
  std::optional<double> compile_seconds;
  std::optional<std::string> compile_log;
  std::optional<double> device_busy_ms;       // summed device time of a timed call (median)
  std::optional<double> host_wall_ms;         // host wall time of a timed call until synchronized (median)
  std::optional<double> call_host_ms;         // the host's own time in a timed call (median)
  std::optional<double> launch_latency_ms;    // harness start marker -> the call's first device work (median)
  std::optional<double> start_span_ms;        // harness start marker -> the call's last device work (median)
  std::optional<double> custom_kernel_share;  // of device time, in kernels compiled from the candidate
  // The worst compared element over every compared call, |c - r| / (atol + rtol * |r|): at most 1
  // for a correct sample; absent when nothing was compared element by element.
  std::optional<double> margin;
  std::optional<double> memory_floor_ms;      // inputs read + outputs written at the device's bandwidth
  std::vector<FlagRow> flags;                 // written with the evaluation, read back by evaluations()
  std::vector<KernelRow> kernels;             // written with the evaluation; read by kernels()
};

struct EvaluationRow : NewEvaluation {
  std::string created;
};

}  // namespace dicebench::results
