// dicebench_cuda: the worker's CUDA extension module, imported by its Python only on CUDA devices.
// It holds the CUPTI recorder's bindings (harness/timing/recorder_bindings.hpp) and CUDA IPC of
// device allocations (cuda_ipc.hpp), which transfer.py uses to hand inputs between the roles.
// Errors reach Python as RuntimeError.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/timing/recorder_bindings.hpp"
#include "harness/worker/cuda_ipc.hpp"

namespace py = pybind11;

namespace dicebench::worker {
namespace {

template <class T>
T value_or_raise(Result<T> result) {
  if (!result) throw std::runtime_error("dicebench_cuda: " + result.error().message);
  return std::move(result).value();
}

void value_or_raise(Result<void> result) {
  if (!result) throw std::runtime_error("dicebench_cuda: " + result.error().message);
}

}  // namespace
}  // namespace dicebench::worker

PYBIND11_MODULE(dicebench_cuda, m) {
  using namespace dicebench::worker;
  m.doc() = "The worker's CUDA module: CUPTI timing of one call (harness/timing/README.md) and CUDA IPC of allocations";
  dicebench::timing::bind_recorder(m);
  m.def(
      "ipc_export",
      [](std::uintptr_t pointer, int device) {
        auto exported = value_or_raise(ipc_export(pointer, device));
        return py::make_tuple(py::bytes(exported.handle), exported.base, exported.size_bytes);
      },
      py::arg("pointer"), py::arg("device"),
      "(handle bytes, base, size) of the device allocation holding pointer: a CUDA IPC handle of the whole "
      "allocation, without torch's /dev/shm reference counter (cuda_ipc.hpp).");
  m.def(
      "ipc_open",
      [](py::bytes handle, int device) {
        auto mapping = value_or_raise(ipc_open(std::string(handle), device));
        return py::make_tuple(mapping.base, mapping.size_bytes);
      },
      py::arg("handle"), py::arg("device"),
      "Map another process's allocation: (base, size as this process's driver reports it). A handle may be open "
      "once per process at a time.");
  m.def(
      "ipc_close", [](std::uintptr_t base, int device) { value_or_raise(ipc_close(base, device)); }, py::arg("base"),
      py::arg("device"), "Synchronize the device, then unmap what ipc_open mapped.");
}
