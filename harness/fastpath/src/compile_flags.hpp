// Maps load_inline's extra_cflags / extra_cuda_cflags / extra_ldflags onto the fast path's two
// compilers: NVRTC for the device part and g++ for the host glue. A flag the fast path cannot
// honour with the same meaning is an error (the reason for falling back).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::fastpath {

struct CompileFlags {
  std::string arch;                          // the NVRTC target: sm_90, or sm_90a when asked for
  std::string cuda_std = "c++17";            // -std for NVRTC and the CUDA glue
  std::string cpp_std = "c++17";             // -std for the C++ glue (extra_cflags)
  std::vector<std::string> nvrtc_options;    // beyond --gpu-architecture and -std
  std::vector<std::string> cuda_host_flags;  // g++ flags for the glue made from cuda_sources
  std::vector<std::string> cpp_host_flags;   // g++ flags for the glue made from cpp_sources
  std::vector<std::string> link_flags;       // -l<lib>, -fopenmp
};

// The optimization flag g++ compiles a glue translation unit with: the last -O of its host flags,
// or -O0 where there is none. The glue is compiled at the level torch's build compiles the same
// source (g++ with extra_cflags for cpp_sources, nvcc's host compiler with nvcc's -O<n> and
// -Xcompiler flags for cuda_sources; both -O0 by default): candidates' host code with undefined
// behaviour (an IntArrayRef left pointing at a dead braced list) runs as meant at -O0 and gives
// garbage optimized, and a verdict must not depend on the path.
std::string host_optimization(const std::vector<std::string>& host_flags);

// Splits flag list entries on whitespace (load_inline joins them with spaces on a shell line).
std::vector<std::string> split_flag_words(const std::vector<std::string>& entries);

// `arch` is the GPU's: "sm_90". Flags naming another architecture are an error.
Result<CompileFlags> map_compile_flags(const std::vector<std::string>& extra_cflags,
                                       const std::vector<std::string>& extra_cuda_cflags,
                                       const std::vector<std::string>& extra_ldflags, std::string_view arch);

}  // namespace dicebench::fastpath
