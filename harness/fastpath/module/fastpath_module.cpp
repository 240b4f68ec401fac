// dicebench_fastpath_native: the Python module of the fast compile path (README.md beside this
// folder). compile() runs the splitter, NVRTC and g++ with the cache (no GPU needed); load() (in
// torch_bridge.cpp) loads a compiled entry into the process. The Python package
// dicebench_fastpath decides between this path and torch's own load_inline.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "harness/fastpath/module/torch_bridge.hpp"
#include "harness/fastpath/src/fastpath_compiler.hpp"

namespace py = pybind11;

namespace dicebench::fastpath {
namespace {

// Text for Python: compiler messages may hold bytes that are not UTF-8.
py::str text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

template <class T>
T get(const py::dict& d, const char* key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : fallback;
}

Toolchain toolchain_from(const py::dict& d) {
  Toolchain t = default_toolchain(d["cache_dir"].cast<std::string>());
  t.device.device_shim_dir = get<std::string>(d, "device_shim_dir", t.device.device_shim_dir);
  t.device.cuda_include_dir = get<std::string>(d, "cuda_include_dir", t.device.cuda_include_dir);
  t.glue.cxx = get<std::string>(d, "cxx", t.glue.cxx);
  t.glue.shim_dir = get<std::string>(d, "shim_dir", t.glue.shim_dir);
  t.glue.cuda_include_dir = t.device.cuda_include_dir;
  t.glue.cuda_library_dir = get<std::string>(d, "cuda_library_dir", t.glue.cuda_library_dir);
  t.glue.timeout_seconds = get<double>(d, "timeout_seconds", t.glue.timeout_seconds);
  return t;
}

py::dict compile(const py::dict& request_dict, const py::dict& toolchain_dict) {
  CompileRequest r;
  r.name = get<std::string>(request_dict, "name", "");
  r.cpp_sources = get<std::vector<std::string>>(request_dict, "cpp_sources", {});
  r.cuda_sources = get<std::vector<std::string>>(request_dict, "cuda_sources", {});
  r.functions = get<std::vector<std::string>>(request_dict, "functions", {});
  r.extra_cflags = get<std::vector<std::string>>(request_dict, "extra_cflags", {});
  r.extra_cuda_cflags = get<std::vector<std::string>>(request_dict, "extra_cuda_cflags", {});
  r.extra_ldflags = get<std::vector<std::string>>(request_dict, "extra_ldflags", {});
  r.arch = request_dict["arch"].cast<std::string>();
  Toolchain toolchain = toolchain_from(toolchain_dict);
  CompileOutcome o;
  {
    py::gil_scoped_release release;
    o = compile_with_fast_path(r, toolchain);
  }
  py::dict out;
  out["ok"] = o.ok;
  out["reason"] = text(o.reason);
  out["key"] = o.key;
  out["entry_dir"] = o.entry_dir;
  out["cache_hit"] = o.cache_hit;
  py::list kernels;
  for (const auto& [expr, lowered] : o.kernels) kernels.append(py::make_tuple(text(expr), text(lowered)));
  out["kernels"] = kernels;
  out["functions"] = o.functions;
  out["seconds"] = o.total_seconds;
  out["split_seconds"] = o.split_seconds;
  out["nvrtc_seconds"] = o.nvrtc_seconds;
  out["gxx_seconds"] = o.gxx_seconds;
  return out;
}

py::dict default_toolchain_dict() {
  py::dict d;
  d["device_shim_dir"] = DICEBENCH_FASTPATH_DEVICE_SHIM_DIR;
  d["shim_dir"] = DICEBENCH_FASTPATH_SHIM_DIR;
  d["cuda_include_dir"] = DICEBENCH_FASTPATH_CUDA_INCLUDE_DIR;
  d["cuda_library_dir"] = DICEBENCH_FASTPATH_CUDA_LIBRARY_DIR;
  d["cxx"] = "g++";
  return d;
}

}  // namespace
}  // namespace dicebench::fastpath

PYBIND11_MODULE(dicebench_fastpath_native, m) {
  m.doc() = "dicebench's fast compile path for load_inline (NVRTC + shim glue)";
  m.def("compile", &dicebench::fastpath::compile, py::arg("request"), py::arg("toolchain"),
        "Compiles a load_inline request on the fast path (cached); returns the outcome as a dict.");
  m.def("default_toolchain", &dicebench::fastpath::default_toolchain_dict,
        "The shim folders and CUDA toolkit folders this module was built with.");
  m.def("nvrtc_version", &dicebench::fastpath::nvrtc_version);
  dicebench::fastpath::add_torch_bridge(m);
}
