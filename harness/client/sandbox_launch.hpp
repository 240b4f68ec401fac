// The candidate sandbox seen from the host: the settings (eval.sandbox and the limits), the
// dicebench-sandbox command line that wraps a candidate worker, and the probe that says once per
// process which protections this machine allows (harness/sandbox/protections.hpp names them).
#pragma once

#include "core/base/result.hpp"
#include "harness/sandbox/sandbox_report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dicebench::harness {

struct SandboxSettings {
  std::string mode = "best";  // best | require | off (protections.hpp: kModes)
  std::string executable;     // dicebench-sandbox
  uint64_t memory_max_bytes = 0;
  uint64_t pids_max = 1024;
  uint64_t file_size_max_bytes = 16ull << 30;
  uint64_t open_files_max = 4096;
  std::vector<std::string> read_only;  // folders candidates must read where a private tmpfs lies (the compile cache)
};

// What this machine allows, probed by running dicebench-sandbox --probe with these settings.
struct SandboxStatus {
  std::string mode;
  sandbox::Report report;       // empty when mode is off
  std::string summary() const;  // "off", or "active: ...; missing: ..."
  std::string json() const;     // {"mode": ..., "protections": {...}}
  bool complete() const { return report.missing().empty(); }
};

// The probe's result, memoized per settings for the life of the process. An error when the
// launcher cannot run, or when mode is require and a protection is missing (one line naming them).
Result<SandboxStatus> sandbox_status(const SandboxSettings& settings);

// The folders a worker reads (its tree, its Python's prefixes and sys.path), asked of the worker
// once per executable: the sandbox keeps them visible where its private /tmp would cover them.
std::vector<std::string> worker_runtime_paths(const std::string& worker);

// dicebench-sandbox's arguments for one job, up to and including "--".
std::vector<std::string> sandbox_command(const SandboxSettings& settings, const std::string& job_dir,
                                         const std::vector<std::string>& hidden);

// A memory limit: a size (core/base/number_text.hpp's parse_size), or "auto", half of this
// machine's memory. nullopt when the text is neither.
std::optional<uint64_t> parse_memory_size(const std::string& text);
uint64_t half_of_physical_memory();

}  // namespace dicebench::harness
