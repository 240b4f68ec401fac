// Human-readable names for what CUPTI reports: demangled kernel names and memcpy kinds.
// Independent of the CUPTI headers (the memcpy kind numbers are fixed by the CUPTI ABI).
#pragma once

#include <cstdint>
#include <string>

namespace dicebench::timing {

// Demangles an Itanium C++ ABI name (abi::__cxa_demangle); returns the input unchanged when it is
// not a mangled name (extern "C" kernels) or cannot be demangled.
std::string demangle(const std::string& mangled);

// "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" for CUPTI's
// CUpti_ActivityMemcpyKind values 1..10; "unknown" for anything else.
std::string memcpy_kind_name(std::uint32_t kind);

}  // namespace dicebench::timing
