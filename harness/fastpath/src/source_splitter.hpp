// The splitter of the fast compile path: reads the CUDA source a candidate hands to load_inline
// and produces the two programs that replace it.
//
//  - the device part, for NVRTC: kernels, device functions, the types, constants and macros they
//    need; host functions and host-only includes blanked out; unannotated constexpr functions
//    marked __host__ __device__ (what nvcc's --expt-relaxed-constexpr allows);
//  - the host part, for g++ against the shim headers: host functions with every kernel launch
//    `k<T><<<grid, block, smem, stream>>>(args)` rewritten into a call of the shim's launcher
//    `::dbfp::launcher<decltype(&k<T>)>(slot, grid, block, smem, stream)(args)`, kernels reduced to
//    declarations, device-only functions and variables blanked out, and every other mention of a
//    kernel (cudaFuncSetAttribute(k, ...)) replaced by the kernel's runtime handle.
//
// Both parts keep the original line numbers (removed text becomes blanks), so compiler messages
// point at the candidate's own lines. What the splitter cannot take is an error (the reason for
// falling back to torch's own toolchain).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::fastpath {

struct KernelInfo {
  std::string name;            // as written
  std::string qualified_name;  // with the enclosing named namespaces: "ns::k"
  bool is_template = false;
  bool extern_c = false;
  int line = 0;
};

struct LaunchSite {
  int line = 0;
  std::string kernel;                         // qualified name
  std::vector<std::string> name_expressions;  // one; one per type inside AT_DISPATCH_*
  std::string replacement;                    // the text that replaced `callee <<<`
};

struct SplitSource {
  std::string device_source;
  std::string host_source;
  std::vector<KernelInfo> kernels;
  std::vector<LaunchSite> launches;
  // Distinct NVRTC name expressions, in slot order: slot i of the host part's kernel table holds
  // the kernel that name_expressions[i] names.
  std::vector<std::string> name_expressions;
  // Libraries the host part needs beyond the CUDA runtime (cublas, cublasLt, curand, ...), found
  // from the identifiers it uses.
  std::vector<std::string> host_libraries;
  // Headers the device part still includes (after host-only ones were removed).
  std::vector<std::string> device_includes;
};

// Splits the CUDA source of a load_inline call. The error names the first thing the fast path
// cannot take, with its line.
Result<SplitSource> split_cuda_source(std::string_view source);

// True when the C++ source (load_inline's cpp_sources) holds only declarations, includes and
// comments: nothing with a body or an initializer. (Such sources could share a translation unit
// with others; the glue builder keeps them apart anyway.)
bool is_declarations_only(std::string_view source);

// Whether a header, included from device code, is one NVRTC can take (with the fast path's
// stub headers for the C and C++ standard headers); host-only headers are dropped from the
// device part instead.
enum class HeaderUse { DeviceAndHost, HostOnly, DeviceOnly };
HeaderUse classify_header(std::string_view header);

}  // namespace dicebench::fastpath
