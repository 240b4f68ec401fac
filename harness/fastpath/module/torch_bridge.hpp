// The part of the fast path's Python module that touches libtorch (torch_bridge.cpp, the one
// translation unit that includes torch's headers): the dbfp_api table over real ATen, loading of a
// cache entry (glue .so and cubin), and the Python callables of a candidate's bound functions.
#pragma once

#include <pybind11/pybind11.h>

namespace dicebench::fastpath {

// Adds load() and abi_version() to the module.
void add_torch_bridge(pybind11::module_& module);

}  // namespace dicebench::fastpath
