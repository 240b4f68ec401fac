// The trusted compile step of the fast path, seen from the host: a sandboxed candidate's
// load_inline calls arrive as candidate.compile messages during its load (PROTOCOL.md), and each
// is compiled by a dicebench-compile process of its own, run in a sandbox whose only writable
// folder is the shared cache and killed at the candidate's compile deadline (hostile sources
// must not hang or write through the host). The candidate then loads the entry it is told of,
// read-only. Entries are content-addressed and checked against the digests in their manifest
// whenever they are read (fastpath_compiler.hpp).
#pragma once

#include "harness/client/sandbox_launch.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace dicebench::harness {

struct CompileService {
  std::string executable;  // dicebench-compile
  std::string cache_dir;
  SandboxSettings sandbox;  // of the candidates; the compile step gets the same limits
};

// The outcome of one compile request, as the candidate's dicebench_fastpath reads it: ok, reason,
// key, entry_dir, cache_hit, kernels ([name expression, lowered name] pairs), functions and the
// stage times. A compile that fails to answer by `deadline` is killed and declined (ok=false with
// the reason), so the candidate takes torch's toolchain.
nlohmann::json compile_for_candidate(const nlohmann::json& request, const CompileService& service,
                                     std::chrono::steady_clock::time_point deadline);

// An outcome with every field, declining the fast path for `reason`.
nlohmann::json declined_compile(const std::string& reason);

}  // namespace dicebench::harness
