// The kernel languages of KernelBench's prompts (kernelbench.backend, prompts.toml's [backends.X])
// as dicebench evaluates them: the Python module their candidates import, which the workers'
// environment must have, or why dicebench refuses the backend; and what a candidate's source shows
// when it uses the language (backend_check.hpp reads it).
#pragma once

#include <array>
#include <string_view>

namespace dicebench::kernelbench {

// Qualified names as the candidate's imports resolve them (python_source.hpp): "triton.jit" is
// also `from triton import jit as J; @J`. Empty entries are unused.
using QualifiedNames = std::array<std::string_view, 5>;

struct KernelBackend {
  std::string_view name;           // as in prompts.toml
  std::string_view python_module;  // what a candidate imports besides torch ("" for none)
  std::string_view refused;        // why dicebench cannot evaluate its candidates ("" if it can)
  // A kernel of the language is a function under one of these decorators (also applied as a call,
  // k = triton.jit(f)) ...
  QualifiedNames kernel_decorators = {};
  // ... whose body uses one of these (a prefix of the qualified name): what makes it device code.
  QualifiedNames kernel_body_uses = {};
  std::string_view body_uses_said = "";  // kernel_body_uses in words, for the flag's detail
};

inline constexpr KernelBackend kKernelBackends[] = {
    // CUDA C++ is a string handed to torch's extension builder: backend_check.cpp reads it so.
    {"cuda", "", ""},
    {"triton",
     "triton",
     "",
     {"triton.jit", "triton.autotune", "triton.heuristics", "triton.runtime.jit.jit",
      "triton.runtime.autotuner.autotune"},
     {"triton.language.load", "triton.language.store", "triton.language.atomic_"},
     "tl.load, tl.store or tl.atomic_*"},
    {"cute",
     "cutlass",
     "",  // CuTe DSL: PyPI nvidia-cutlass-dsl
     {"cutlass.cute.kernel"},
     {"cutlass."},
     "cutlass.cute"},
    {"tilelang", "tilelang", "", {"tilelang.language.prim_func"}, {"tilelang.language.Kernel"}, "T.Kernel"},
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
