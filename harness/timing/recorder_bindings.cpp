// The Python face of the CUPTI recorder (README.md beside this file): bind_recorder adds the
// Recorder class and the record helpers to a module; the worker's dicebench_cuda module calls it.
// Errors reach Python as RuntimeError.
#include "harness/timing/recorder_bindings.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "harness/timing/activity_records.hpp"
#include "harness/timing/cupti_recorder.hpp"
#include "harness/timing/record_names.hpp"

namespace py = pybind11;

namespace dicebench::timing {
namespace {

template <class T>
T value_or_raise(Result<T> result) {
  if (!result) throw std::runtime_error("dicebench_cuda: " + result.error().message);
  return std::move(result).value();
}

py::list triple(const std::array<std::int32_t, 3>& values) {
  py::list out;
  for (std::int32_t v : values) out.append(v);
  return out;
}

py::dict kernel_dict(const KernelRecord& kernel) {
  py::dict out;
  out["name"] = kernel.name;
  out["mangled"] = kernel.mangled;
  out["start_ns"] = kernel.start_ns;
  out["end_ns"] = kernel.end_ns;
  out["grid"] = triple(kernel.grid);
  out["block"] = triple(kernel.block);
  out["stream"] = kernel.stream;
  out["device"] = kernel.device;
  out["shared_bytes"] = kernel.shared_bytes;
  return out;
}

// Memcpy or memset records as dicts: bytes, start_ns, end_ns, stream, device (and a copy's kind).
template <class Record>
py::list transfer_list(const std::vector<Record>& records) {
  py::list out;
  for (const Record& record : records) {
    py::dict item;
    if constexpr (std::is_same_v<Record, MemcpyRecord>) item["kind"] = record.kind;
    item["bytes"] = record.bytes;
    item["start_ns"] = record.start_ns;
    item["end_ns"] = record.end_ns;
    item["stream"] = record.stream;
    item["device"] = record.device;
    out.append(std::move(item));
  }
  return out;
}

py::dict call_dict(const CallRecord& call) {
  py::dict out;
  out["begin_ns"] = call.begin_ns;
  out["host_end_ns"] = call.host_end_ns;
  out["first_start_ns"] = call.first_start_ns;
  out["last_end_ns"] = call.last_end_ns;
  out["span_origin_ns"] = call.span_origin_ns;
  out["marker"] = call.marker;
  out["span_ms"] = ns_to_ms(call.span_ns);
  out["busy_ms"] = ns_to_ms(call.busy_ns);
  out["host_ms"] = ns_to_ms(call.host_ns);
  out["device_span_ms"] = ns_to_ms(call.device_work ? call.last_end_ns - call.first_start_ns : 0);
  out["call_host_ms"] = ns_to_ms(call.call_host_ns);
  out["launch_latency_ms"] = ns_to_ms(call.launch_latency_ns);
  out["runtime_ms"] = ns_to_ms(call.runtime_ns);
  out["device_work"] = call.device_work;
  py::list kernels;
  for (const KernelRecord& kernel : call.activity.kernels) kernels.append(kernel_dict(kernel));
  out["kernels"] = std::move(kernels);
  out["memcpy"] = transfer_list(call.activity.memcpys);
  out["memset"] = transfer_list(call.activity.memsets);
  out["dropped"] = call.dropped;
  out["incomplete"] = call.incomplete;
  out["stale"] = call.stale;
  return out;
}

std::array<std::int32_t, 3> triple_from(const py::dict& item, const char* key) {
  std::array<std::int32_t, 3> out{};
  if (!item.contains(key)) return out;
  const auto values = item[key].cast<std::vector<std::int32_t>>();
  if (values.size() != 3) throw py::value_error(std::string("kernel '") + key + "' must have 3 entries");
  std::copy(values.begin(), values.end(), out.begin());
  return out;
}

// Kernel dicts as end() returns them; "mangled", "grid" and "block" may be left out.
std::vector<KernelRecord> kernels_from(const py::iterable& kernels) {
  std::vector<KernelRecord> out;
  for (const py::handle& handle : kernels) {
    if (!py::isinstance<py::dict>(handle)) throw py::type_error("kernels must be dicts as Recorder.end() returns");
    const auto item = py::reinterpret_borrow<py::dict>(handle);
    KernelRecord kernel;
    kernel.name = item["name"].cast<std::string>();
    kernel.mangled = item.contains("mangled") ? item["mangled"].cast<std::string>() : kernel.name;
    kernel.start_ns = item["start_ns"].cast<std::uint64_t>();
    kernel.end_ns = item["end_ns"].cast<std::uint64_t>();
    kernel.grid = triple_from(item, "grid");
    kernel.block = triple_from(item, "block");
    out.push_back(std::move(kernel));
  }
  return out;
}

py::dict summarize_kernels(const py::iterable& kernels_in, const py::iterable& names_in) {
  const std::vector<KernelRecord> kernels = kernels_from(kernels_in);
  std::unordered_set<std::string> names;
  for (const py::handle& name : names_in) names.insert(name.cast<std::string>());
  py::list groups;
  for (const KernelGroup& group : group_kernels(kernels)) {
    py::dict item;
    item["name"] = group.name;
    item["mangled"] = group.mangled;
    item["launches"] = group.launches;
    item["total_ms"] = ns_to_ms(group.total_ns);
    item["grid"] = triple(group.grid);
    item["block"] = triple(group.block);
    groups.append(std::move(item));
  }
  const KernelShare share = candidate_share(kernels, names);
  py::dict out;
  out["kernels"] = std::move(groups);
  out["kernel_ms"] = ns_to_ms(share.kernel_ns);
  out["candidate_ms"] = ns_to_ms(share.candidate_ns);
  out["candidate_launches"] = share.candidate_launches;
  out["candidate_share"] = share.share;
  return out;
}

// A handle on the process-wide recorder; every Recorder() object shares it.
struct RecorderHandle {
  CuptiRecorder* recorder;
};

}  // namespace

void bind_recorder(py::module_& m) {
  m.attr("DEFAULT_BUFFER_BYTES") = CuptiRecorder::default_buffer_bytes;

  py::class_<RecorderHandle>(m, "Recorder",
                             "The process-wide CUPTI activity recorder. The first Recorder() subscribes to CUPTI "
                             "(kernel, memcpy, memset records of every stream); later ones share it.")
      .def(py::init([](std::size_t buffer_bytes) {
             return RecorderHandle{value_or_raise(CuptiRecorder::instance(buffer_bytes))};
           }),
           py::arg("buffer_bytes") = CuptiRecorder::default_buffer_bytes)
      .def(
          "begin", [](RecorderHandle& self, bool reassert) { return value_or_raise(self.recorder->begin(reassert)); },
          py::arg("reassert") = true,
          "Start a timed call: synchronizes the device, discards earlier records and returns the start timestamp "
          "in ns; reassert (default) first re-registers the callbacks and re-enables the record kinds. Inside an open "
          "call it returns the open call's start and makes end() fail.")
      .def(
          "end", [](RecorderHandle& self) { return call_dict(value_or_raise(self.recorder->end())); },
          "End the timed call: synchronizes the device and returns the call's figures and records as a dict.")
      .def(
          "cancel", [](RecorderHandle& self) { return self.recorder->cancel(); },
          "Close an open call without a result; returns whether one was open.")
      .def_property_readonly("in_call", [](const RecorderHandle& self) { return self.recorder->in_call(); });

  m.def(
      "timestamp", [] { return value_or_raise(CuptiRecorder::timestamp()); },
      "CUPTI's clock in ns (the clock of begin() and of the records).");
  m.def(
      "stream_id", [](std::uintptr_t stream) { return value_or_raise(CuptiRecorder::stream_id(stream)); },
      py::arg("stream"),
      "CUPTI's ID of a stream handle (torch.cuda.Stream.cuda_stream), as in the records' \"stream\".");
  m.def("summarize_kernels", &summarize_kernels, py::arg("kernels"), py::arg("candidate_names") = py::tuple(),
        "Per-kernel breakdown (grouped by mangled name: launches, total_ms, grid and block of the first launch) "
        "and the share of kernel time in kernels whose mangled or demangled name is in candidate_names.");
  m.def("demangle", &demangle, py::arg("name"), "Demangle a C++ kernel name (unchanged if not mangled).");
}

}  // namespace dicebench::timing
