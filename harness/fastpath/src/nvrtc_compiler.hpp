// Compiles the device part of a candidate with NVRTC to a cubin for one GPU architecture, and
// resolves the lowered (mangled) name of every kernel the host part names.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/base/result.hpp"
#include "harness/fastpath/src/compile_flags.hpp"

namespace dicebench::fastpath {

struct DeviceToolchain {
  std::string device_shim_dir;   // harness/fastpath/device: prelude and std stub headers
  std::string cuda_include_dir;  // <cuda>/include
};

struct DeviceBinary {
  std::string cubin;
  std::vector<std::pair<std::string, std::string>> lowered_names;  // name expression -> symbol
  std::string log;                                                 // warnings, if any
  double seconds = 0;
};

// The text NVRTC compiles: the prelude, the libcu++ headers for std:: names the source uses
// without including them (torch/extension.h would have brought them under nvcc), then the source
// under #line 1 "cuda.cu".
std::string device_translation_unit(const std::string& device_source);

// The NVRTC options for `flags` (architecture, -std, torch's nvcc defines, include paths).
std::vector<std::string> nvrtc_options(const CompileFlags& flags, const DeviceToolchain& toolchain);

// Compiles; the error carries the first lines of NVRTC's log.
Result<DeviceBinary> compile_device_part(const std::string& device_source,
                                         const std::vector<std::string>& name_expressions, const CompileFlags& flags,
                                         const DeviceToolchain& toolchain);

// "13.0": NVRTC's version, for cache keys.
std::string nvrtc_version();

// The first `max_lines` lines of a compiler log holding an error, or the log's head.
std::string first_error_lines(const std::string& log, int max_lines);

}  // namespace dicebench::fastpath
