// Demangled kernel names and memcpy kind names (record_names.hpp).
#include "harness/timing/record_names.hpp"

#include <cxxabi.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace dicebench::timing {

std::string demangle(const std::string& mangled) {
  // Only Itanium-mangled names start with _Z; anything else (extern "C" kernels) is a plain name
  // that __cxa_demangle would otherwise try to read as a type (e.g. "i" -> "int").
  if (mangled.size() < 3 || mangled.compare(0, 2, "_Z") != 0) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                              std::free);
  if (status != 0 || text == nullptr) return mangled;
  return std::string(text.get());
}

std::string memcpy_kind_name(std::uint32_t kind) {
  // CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1 ... CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10 (cupti_activity.h).
  static constexpr std::array<std::string_view, 11> names = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                             "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return std::string(kind < names.size() ? names[kind] : names[0]);
}

}  // namespace dicebench::timing
