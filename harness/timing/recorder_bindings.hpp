// The Python bindings of the CUPTI recorder (Recorder, timestamp, stream_id, summarize_kernels,
// demangle), added to a pybind11 module by whoever defines it (the worker's dicebench_cuda).
#pragma once

#include <pybind11/pybind11.h>

namespace dicebench::timing {

void bind_recorder(pybind11::module_& m);

}  // namespace dicebench::timing
