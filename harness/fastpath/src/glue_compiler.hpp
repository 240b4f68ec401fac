// Builds a candidate's host glue: the C++ translation units made from load_inline's cpp_sources
// (with the bindings of `functions`) and from the host part of cuda_sources (launches rewritten),
// compiled by g++ in parallel against the shim headers (with a precompiled prelude), then linked
// into one shared object. A g++ error is the reason to fall back.
#pragma once

#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "harness/fastpath/src/compile_flags.hpp"

namespace dicebench::fastpath {

struct GlueToolchain {
  std::string cxx = "g++";
  std::string shim_dir;          // harness/fastpath/shim
  std::string cuda_include_dir;  // <cuda>/include
  std::string cuda_library_dir;  // <cuda>/lib64 (libcudart, libcublas ...)
  std::string pch_root;          // where precompiled preludes live ("" = none)
  double timeout_seconds = 120;
};

struct GlueInput {
  std::string cpp_source;  // cpp_sources joined with "\n"
  bool has_cuda = false;
  std::string cuda_host_source;  // the splitter's host part
  std::vector<std::string> functions;
  std::vector<std::string> name_expressions;  // kernel slots
  std::vector<std::string> host_libraries;    // from the splitter: cublas, curand ...
  CompileFlags flags;
};

struct GlueBuild {
  double seconds = 0;  // wall time of the two compiles and the link
  double cpp_seconds = 0;
  double cuda_seconds = 0;
  double link_seconds = 0;
  bool used_pch = false;  // the precompiled preludes were offered (g++ decides if they fit)
};

// The two translation units as g++ sees them (also for tests and for debugging).
std::string glue_cpp_unit(const GlueInput& input);
std::string glue_cuda_unit(const GlueInput& input);

// g++'s identity ("g++ (Debian 12.2.0-14) 12.2.0"), for cache keys.
std::string compiler_version(const std::string& cxx);

// Where each translation unit's precompiled prelude is: the folder to put first on its include
// path, or "" for none.
struct PreludeFolders {
  std::string cpp;
  std::string cuda;
};

// The precompiled preludes for this toolchain and the optimization level of each of `input`'s
// units (host_optimization), each level built once under toolchain.pch_root (concurrent callers
// are safe: built aside, then renamed into place). "" where they cannot be built (the glue then
// compiles without them).
PreludeFolders ensure_precompiled_preludes(const GlueToolchain& toolchain, const std::string& toolchain_key,
                                           const GlueInput& input);

// Compiles and links into `output_so`, with intermediate files in `work_dir`. When the error is a
// compiler diagnostic, `*deterministic` is set (the same input would fail again).
Result<GlueBuild> build_glue(const GlueInput& input, const GlueToolchain& toolchain, const PreludeFolders& preludes,
                             const std::string& work_dir, const std::string& output_so, bool* deterministic);

}  // namespace dicebench::fastpath
