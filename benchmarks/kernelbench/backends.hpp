// The kernel languages of KernelBench's prompts (kernelbench.backend, prompts.toml's [backends.X])
// as dicebench evaluates them: the Python module their candidates import, which the workers'
// environment must have, or why dicebench refuses the backend.
#pragma once

#include <string_view>

namespace dicebench::kernelbench {

struct KernelBackend {
  std::string_view name;           // as in prompts.toml
  std::string_view python_module;  // what a candidate imports besides torch ("" for none)
  std::string_view refused;        // why dicebench cannot evaluate its candidates ("" if it can)
};

inline constexpr KernelBackend kKernelBackends[] = {
    {"cuda", "", ""},
    {"triton", "triton", ""},
    {"cute", "cutlass", ""},  // CuTe DSL: PyPI nvidia-cutlass-dsl
    {"tilelang", "tilelang", ""},
    {"thunderkittens", "",
     "ThunderKittens candidates build against its C++ headers, which no package provides for torch's or dicebench's "
     "toolchain"},
    {"hip", "", "HIP candidates need AMD's ROCm toolchain and an AMD GPU"},
};

// The entry of `name`, or nullptr when prompts.toml may define it but dicebench does not know it.
constexpr const KernelBackend* find_backend(std::string_view name) {
  for (const auto& backend : kKernelBackends)
    if (backend.name == name) return &backend;
  return nullptr;
}

}  // namespace dicebench::kernelbench
