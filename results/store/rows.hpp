// Plain structs for what the results store writes and reads: runs, problems and samples, one
// struct per table shape (New* for inserts, *Row for what comes back). An evaluation's row is
// generated from its spec (core/spec/evaluation_store.hpp: StoredEvaluation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/problem_key.hpp"
#include "core/spec/evaluation_store.hpp"
#include "core/spec/vocabulary.hpp"

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
  // The problem's degenerate traits as a JSON array of trait names (core/spec/vocabulary.toml); absent
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

}  // namespace dicebench::results
