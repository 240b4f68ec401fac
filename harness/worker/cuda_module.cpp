// dicebench_cuda: the worker's CUDA extension module, imported by its Python only on CUDA devices.
// It holds the CUPTI recorder's bindings (harness/timing/recorder_bindings.hpp) and CUDA IPC of
// device allocations (cuda_ipc.hpp), which transfer.py uses to hand inputs between the roles, and
// device memory at never-used addresses (fresh_memory.hpp), where placement.py moves inputs, and
// zeroing device memory before it can reach another job (device_scrub.hpp; scrub.py plans it).
// Errors reach Python as RuntimeError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/timing/recorder_bindings.hpp"
#include "harness/worker/cuda_ipc.hpp"
#include "harness/worker/device_scrub.hpp"
#include "harness/worker/fresh_memory.hpp"

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
  m.def(
      "map_fresh",
      [](int device, std::size_t bytes, const std::vector<std::pair<std::uintptr_t, std::uintptr_t>>& avoid) {
        auto region = value_or_raise(map_fresh(device, bytes, avoid));
        return py::make_tuple(region.address, region.size_bytes, region.handle);
      },
      py::arg("device"), py::arg("bytes"), py::arg("avoid"),
      "(address, size, handle): at least bytes of device memory at an address range that overlaps none of avoid "
      "([first, end) pairs) nor any range reserved before in this process (fresh_memory.hpp).");
  m.def(
      "unmap_fresh",
      [](std::uintptr_t address, std::size_t size, std::uint64_t handle, int device) {
        value_or_raise(unmap_fresh(FreshRegion{address, size, handle}, device));
      },
      py::arg("address"), py::arg("size"), py::arg("handle"), py::arg("device"),
      "Synchronize the device, zero a map_fresh region, unmap it and release its memory; its addresses stay "
      "reserved.");
  m.def(
      "mapped_fresh",
      [] {
        std::vector<std::pair<std::uintptr_t, std::size_t>> regions;
        for (const FreshRegion& region : mapped_fresh()) regions.emplace_back(region.address, region.size_bytes);
        return regions;
      },
      "[(address, size)] of the map_fresh regions not unmapped yet.");
  m.def(
      "zero_ranges",
      [](const std::vector<std::pair<std::uintptr_t, std::size_t>>& ranges, int device, std::uintptr_t stream) {
        std::vector<DeviceRange> device_ranges;
        device_ranges.reserve(ranges.size());
        for (const auto& [address, size] : ranges) device_ranges.push_back(DeviceRange{address, size});
        py::gil_scoped_release unlocked;  // the device works; other Python threads may run meanwhile
        return value_or_raise(zero_ranges(device_ranges, device, stream));
      },
      py::arg("ranges"), py::arg("device"), py::arg("stream") = 0,
      "Write zeros over [(address, size)] of device memory on stream (a cudaStream_t; 0: the legacy default "
      "stream) and wait for it; returns the bytes zeroed (device_scrub.hpp).");
}
