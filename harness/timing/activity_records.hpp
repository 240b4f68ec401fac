// Plain records of device activity (kernels, memory copies, memory sets) as the CUPTI recorder
// collects them, and the arithmetic over them: the span of a timed call, the union of busy device
// time, the per-kernel breakdown and the share of kernel time spent in the candidate's own kernels.
// Nothing here touches CUDA or CUPTI, so all of it is unit-tested on machines without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

namespace dicebench::timing {

// Timestamps are CUPTI's, in nanoseconds; device records and cuptiGetTimestamp share one clock.
struct Interval {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

struct KernelRecord {
  std::string name;     // demangled (equal to mangled where the name is not a C++ mangled name)
  std::string mangled;  // as CUPTI reported it
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::array<std::int32_t, 3> grid{};
  std::array<std::int32_t, 3> block{};
  std::uint32_t stream = 0;
  std::uint32_t device = 0;
  std::int64_t shared_bytes = 0;  // static + dynamic shared memory per block
  std::uint32_t correlation = 0;  // CUPTI's correlation ID of the launching API call (0: unknown)
};

struct MemcpyRecord {
  std::string kind;  // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", ... (memcpy_kind_name)
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t stream = 0;
  std::uint32_t device = 0;
  std::uint32_t correlation = 0;
};

struct MemsetRecord {
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t stream = 0;
  std::uint32_t device = 0;
  std::uint32_t correlation = 0;
};

// Everything the recorder collected between two flushes, in delivery order (not sorted).
struct ActivityLog {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
};

// The host's timestamps of one timed call (cuptiGetTimestamp, ns).
struct HostTimes {
  std::uint64_t begin_ns = 0;     // begin() starts the call, before it issues the marker
  std::uint64_t ready_ns = 0;     // begin() is done: the caller's call starts (0: not taken)
  std::uint64_t call_end_ns = 0;  // end() is entered: the caller's call has returned (0: not taken)
  std::uint64_t host_end_ns = 0;  // end()'s device-wide synchronize has returned
};

// One timed call, ready to report.
struct CallRecord {
  std::uint64_t begin_ns = 0;        // cuptiGetTimestamp at begin()
  std::uint64_t host_end_ns = 0;     // cuptiGetTimestamp at end(), after the caller's synchronize
  std::uint64_t first_start_ns = 0;  // earliest device start in the call (0 without device work)
  std::uint64_t last_end_ns = 0;     // latest device end in the call (0 without device work)
  // Where the span starts: the device start of the recorder's marker (a 4-byte memset issued at
  // begin() on a stream of its own, so on the device's clock like every record), else begin_ns.
  // CUPTI converts device timestamps to the host clock with an offset that can reach a few
  // hundred microseconds, so a span from a host timestamp to a device one is not exact. Work
  // launched after the marker (a higher correlation ID) that started before it moves the origin
  // back to its start: with other processes on the GPU, the marker can wait for the compute
  // engine while the call's copy already runs on a copy engine.
  std::uint64_t span_origin_ns = 0;
  bool marker = false;        // the marker's record was found (and taken out of the memsets)
  std::uint64_t span_ns = 0;  // origin -> last device end; begin -> host end without device work
  std::uint64_t busy_ns = 0;  // length of the union of all device intervals (clipped at begin)
  std::uint64_t host_ns = 0;  // begin -> host end
  // The host's own time in the call: ready -> call end (0 when either was not taken).
  std::uint64_t call_host_ns = 0;
  // Origin -> first device start: the harness's, CUPTI's and the caller's launch latency.
  std::uint64_t launch_latency_ns = 0;
  // The call's time: the longer of its device span (first device start -> last device end) and
  // its host time, i.e. what the call costs each time in a steady stream of calls. Host work before
  // the first launch counts through call_host_ns; the latency of the harness's own start does not.
  // Without device work: host_ns (so records hidden from CUPTI can only make a call look slower).
  std::uint64_t runtime_ns = 0;
  bool device_work = false;      // at least one timed device record fell in the call
  ActivityLog activity;          // the call's records, each list sorted by start time
  std::uint64_t incomplete = 0;  // records without timestamps (CUPTI could not time them)
  std::uint64_t stale = 0;       // records that ended before begin (work from before the call)
  std::uint64_t dropped = 0;     // records CUPTI dropped for want of buffer space
};

// Length of the union of the intervals (an empty or reversed interval contributes nothing).
std::uint64_t union_length_ns(std::span<const Interval> intervals);

// Builds a CallRecord from what the recorder collected between begin and end: drops records
// without timestamps (counted as incomplete) and records of earlier work, which ended before the
// span's origin and were not launched after the marker (counted as stale), clips the rest to start
// no earlier than the origin, sorts each list by start time and fills in the figures. dropped is left for the caller.
// marker_stream: the CUPTI stream ID of the recorder's marker memset, when it issued one.
CallRecord assemble_call(const HostTimes& host, ActivityLog log,
                         std::optional<std::uint32_t> marker_stream = std::nullopt);

// Kernels grouped by mangled name: launches, summed duration (not a union: concurrent launches of
// the same kernel each count), and the grid and block of the group's earliest launch. Sorted by
// total time, longest first, then by name.
struct KernelGroup {
  std::string name;
  std::string mangled;
  std::uint64_t launches = 0;
  std::uint64_t total_ns = 0;
  std::array<std::int32_t, 3> grid{};
  std::array<std::int32_t, 3> block{};
};
std::vector<KernelGroup> group_kernels(std::span<const KernelRecord> kernels);

// The candidate's part of the kernel time: a kernel is the candidate's when its mangled or its
// demangled name is in candidate_names (exact match). share = candidate_ns / kernel_ns, 0 when no
// kernel ran; a candidate that only calls PyTorch ops therefore has share 0.
struct KernelShare {
  std::uint64_t kernel_ns = 0;     // summed duration of all kernels
  std::uint64_t candidate_ns = 0;  // summed duration of the candidate's kernels
  std::uint64_t candidate_launches = 0;
  double share = 0.0;
};
KernelShare candidate_share(std::span<const KernelRecord> kernels,
                            const std::unordered_set<std::string>& candidate_names);

inline double ns_to_ms(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace dicebench::timing
