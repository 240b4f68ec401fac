// The fast compile path for one load_inline call: split the CUDA source, compile the device part
// with NVRTC and the host glue with g++ (in parallel), and store the cubin and the glue in the
// on-disk cache under a key that covers the sources, the options and the toolchain. A second call
// with the same key (in any process) finds the entry, or waits for the process building it.
//
// The outcome is either an entry to load, or the reason the candidate must take torch's own
// toolchain instead. Reasons that the same input would produce again (the splitter's, a compiler
// diagnostic) are cached too.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/fastpath/src/glue_compiler.hpp"
#include "harness/fastpath/src/nvrtc_compiler.hpp"

namespace dicebench::fastpath {

// What load_inline was given (sources already normalised to lists).
struct CompileRequest {
  std::string name;
  std::vector<std::string> cpp_sources;
  std::vector<std::string> cuda_sources;
  std::vector<std::string> functions;
  std::vector<std::string> extra_cflags;
  std::vector<std::string> extra_cuda_cflags;
  std::vector<std::string> extra_ldflags;
  std::string arch;  // "sm_90"
};

struct Toolchain {
  DeviceToolchain device;
  GlueToolchain glue;
  std::string cache_dir;
};

struct CompileOutcome {
  bool ok = false;
  std::string reason;     // why the fast path cannot take it (ok == false)
  std::string key;        // cache key (sha256 hex)
  std::string entry_dir;  // ok: holds kernels.cubin (when there are kernels) and glue.so
  bool cache_hit = false;
  std::vector<std::pair<std::string, std::string>> kernels;  // name expression -> lowered name
  std::vector<std::string> functions;
  // Seconds spent by this call, and (on a miss) by each stage.
  double total_seconds = 0;
  double split_seconds = 0;
  double nvrtc_seconds = 0;
  double gxx_seconds = 0;
};

// The toolchain this build found (the shim folders, the CUDA toolkit, g++), caching in cache_dir.
Toolchain default_toolchain(const std::string& cache_dir);

// The part of the cache key that names the toolchain: NVRTC and g++ versions, the shim headers'
// content, the ABI version and the CUDA include folder.
std::string toolchain_fingerprint(const Toolchain& toolchain);

// The cache key of a request under a toolchain fingerprint.
std::string cache_key(const CompileRequest& request, const std::string& fingerprint);

CompileOutcome compile_with_fast_path(const CompileRequest& request, const Toolchain& toolchain);

// Reads a cache entry's manifest (for tests and for the loader).
Result<CompileOutcome> read_cache_entry(const std::string& entry_dir);

}  // namespace dicebench::fastpath
