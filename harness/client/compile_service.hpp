// The trusted compile step of the fast path: a sandboxed candidate's load_inline calls arrive
// here as candidate.compile messages during its load (PROTOCOL.md), and the host compiles them
// (splitter, NVRTC, g++) into the shared cache, which only this step writes; the candidate loads
// the entry it is told of, read-only. Entries are content-addressed and checked against the
// digests in their manifest whenever they are read (fastpath_compiler.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace dicebench::harness {

// The outcome of one compile request, as the candidate's dicebench_fastpath reads it: ok, reason,
// key, entry_dir, cache_hit, kernels ([name expression, lowered name] pairs), functions and the
// stage times. A malformed request, or a dicebench built without the fast path, is ok=false with
// the reason, so the candidate takes torch's toolchain.
nlohmann::json compile_for_candidate(const nlohmann::json& request, const std::string& cache_dir);

}  // namespace dicebench::harness
