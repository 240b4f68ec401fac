// Which load_inline calls the host makes a precompiled torch/extension.h for, and the call that
// makes it (dicebench_harness/precompiled_header.py makes and uses the header). A header is shared
// by every later build with the same flags, so only flags that name no path may make one: the
// candidate's other arguments (sources, include folders, a compiler of its own) never reach it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace dicebench::harness {

// The toolchain.pch call ({arguments: {name, cpp_sources: "", extra_cflags, with_cuda},
// environment}) whose header main.cpp's compile of `call` would use, or nullopt when `call` may not
// make one: an extra_cflags entry outside the list of plain flags (optimisation, language standard,
// warnings, simple macros), extra_include_paths, a compiler or CUDA in its environment other than
// this host's own (CUDA_HOME as the host has it is taken, and passed on),
// SYCL, or main.cpp without torch/extension.h (no_implicit_headers) or with torch's own header
// (use_pch).
std::optional<nlohmann::json> header_call_for(const nlohmann::json& call);

}  // namespace dicebench::harness
