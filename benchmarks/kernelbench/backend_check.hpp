// The static half of "did the candidate write its kernels in the language it was asked for"
// (KernelBench's kernel_static_checker, per backend): read from the source before it runs, never
// a verdict, stored as the evaluation flag backend_unused. The runtime half is the profile's
// candidate share (which kernels ran, and whose they were).
//
// A CUDA candidate must hand a string holding a __global__ kernel to torch.utils.cpp_extension
// (load_inline or load). A Triton, CuTe DSL or TileLang candidate must import the language, define
// a kernel under one of its decorators (backends.hpp) whose body does device work, and refer to
// that kernel outside kernel code (a launch). Names are resolved through the candidate's imports
// and aliases, comments and strings are not code, so renaming the module or the decorator does not
// change the answer.
#pragma once

#include "benchmarks/kernelbench/backends.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace dicebench::kernelbench {

// The evaluation flag this check reports (core/spec/vocabulary.toml spells it; a test holds them equal).
inline constexpr std::string_view kBackendUnusedFlag = "backend_unused";

// nullopt when the source uses `backend`; else why not, in one line.
std::optional<std::string> backend_unused(const KernelBackend& backend, std::string_view source);

}  // namespace dicebench::kernelbench
