// Shim of <pybind11/stl.h> for the fast path: bindings come from load_inline's `functions`;
// code that uses pybind11 itself falls back to torch's toolchain.
#pragma once
namespace pybind11 {}
