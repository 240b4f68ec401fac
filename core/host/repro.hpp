// The reproducibility record of a run: dicebench version and git sha, host, GPU and driver,
// CUDA toolkit version, torch version (once the evaluation worker reports it), and which
// protections the candidate sandbox has on this machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dicebench::host {

struct ReproRecord {
  std::string dicebench_version;
  std::string git_sha;
  std::string host;
  std::optional<std::string> gpu;  // "NVIDIA H200" (all visible GPUs, comma-separated)
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;  // CUDA toolkit on this machine
  std::optional<std::string> torch_version;
  std::optional<std::string> sandbox_json;  // the candidate sandbox's protections (harness::SandboxStatus::json)
  std::string to_json() const;
};

// Reads the machine without creating a CUDA context (nvidia-smi, the toolkit's version.json).
ReproRecord collect_repro_record();

// The GPUs workers may be pinned to, as CUDA_VISIBLE_DEVICES values: the entries of this
// process's CUDA_VISIBLE_DEVICES when it is set, else "0".."N-1" for the N GPUs nvidia-smi lists
// (none where nvidia-smi fails).
std::vector<std::string> visible_gpus();

}  // namespace dicebench::host
