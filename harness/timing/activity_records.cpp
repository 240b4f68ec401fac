// The arithmetic over recorded device activity (activity_records.hpp).
#include "harness/timing/activity_records.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace dicebench::timing {

namespace {

std::uint64_t duration_ns(std::uint64_t start_ns, std::uint64_t end_ns) {
  return end_ns > start_ns ? end_ns - start_ns : 0;
}

template <class Record>
void sort_by_start(std::vector<Record>& records) {
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
  });
}

}  // namespace

std::uint64_t union_length_ns(std::span<const Interval> intervals) {
  std::vector<Interval> sorted;
  sorted.reserve(intervals.size());
  for (const Interval& interval : intervals) {
    if (interval.end_ns > interval.start_ns) sorted.push_back(interval);
  }
  std::sort(sorted.begin(), sorted.end(), [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  std::uint64_t total = 0;
  std::size_t i = 0;
  while (i < sorted.size()) {
    std::uint64_t start = sorted[i].start_ns;
    std::uint64_t end = sorted[i].end_ns;
    for (++i; i < sorted.size() && sorted[i].start_ns <= end; ++i) end = std::max(end, sorted[i].end_ns);
    total += end - start;
  }
  return total;
}

CallRecord assemble_call(const HostTimes& host, ActivityLog log, std::optional<std::uint32_t> marker_stream) {
  CallRecord call;
  call.begin_ns = host.begin_ns;
  call.host_end_ns = host.host_end_ns;
  call.host_ns = duration_ns(host.begin_ns, host.host_end_ns);
  if (host.ready_ns != 0 && host.call_end_ns != 0) call.call_host_ns = duration_ns(host.ready_ns, host.call_end_ns);
  call.span_origin_ns = host.begin_ns;
  auto timed = [](const auto& record) {
    return record.start_ns != 0 && record.end_ns != 0 && record.end_ns >= record.start_ns;
  };
  // Launched after the marker (correlation IDs count up): the call's work, whenever it ran.
  std::uint32_t marker_correlation = 0;
  auto after_marker = [&](const auto& record) {
    return marker_correlation != 0 && record.correlation > marker_correlation;
  };
  if (marker_stream) {
    auto marker = std::find_if(log.memsets.begin(), log.memsets.end(), [&](const MemsetRecord& m) {
      return m.stream == *marker_stream && m.start_ns != 0 && timed(m);
    });
    if (marker != log.memsets.end()) {
      call.marker = true;
      call.span_origin_ns = marker->start_ns;
      marker_correlation = marker->correlation;
      log.memsets.erase(marker);
      auto earliest = [&](const auto& records) {
        for (const auto& record : records)
          if (timed(record) && after_marker(record))
            call.span_origin_ns = std::min(call.span_origin_ns, record.start_ns);
      };
      earliest(log.kernels);
      earliest(log.memcpys);
      earliest(log.memsets);
    }
  }
  const std::uint64_t origin = call.span_origin_ns;

  std::vector<Interval> intervals;
  // Keeps a record when it carries timestamps and is the call's: launched after the marker, or
  // not ended before the origin. Its interval, clipped to start no earlier than the origin, joins
  // the span and busy-time figures.
  auto admit = [&](const auto& record) {
    if (!timed(record)) {
      ++call.incomplete;
      return false;
    }
    if (record.end_ns < origin && !after_marker(record)) {
      ++call.stale;
      return false;
    }
    intervals.push_back({std::max(record.start_ns, origin), record.end_ns});
    return true;
  };
  auto filter = [&](auto& records) {
    std::erase_if(records, [&](const auto& record) { return !admit(record); });
    sort_by_start(records);
  };
  filter(log.kernels);
  filter(log.memcpys);
  filter(log.memsets);
  call.activity = std::move(log);

  call.device_work = !intervals.empty();
  if (call.device_work) {
    call.first_start_ns =
        std::min_element(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
          return a.start_ns < b.start_ns;
        })->start_ns;
    call.last_end_ns = std::max_element(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
                         return a.end_ns < b.end_ns;
                       })->end_ns;
    call.span_ns = call.last_end_ns - origin;
    call.busy_ns = union_length_ns(intervals);
    call.launch_latency_ns = call.first_start_ns - origin;
    call.runtime_ns = std::max(call.last_end_ns - call.first_start_ns, call.call_host_ns);
  } else {
    call.span_ns = call.host_ns;
    call.runtime_ns = call.host_ns;
  }
  return call;
}

std::vector<KernelGroup> group_kernels(std::span<const KernelRecord> kernels) {
  std::vector<std::size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return kernels[a].start_ns < kernels[b].start_ns; });
  std::vector<KernelGroup> groups;
  std::unordered_map<std::string, std::size_t> index_of;
  for (std::size_t i : order) {
    const KernelRecord& kernel = kernels[i];
    auto [it, inserted] = index_of.try_emplace(kernel.mangled, groups.size());
    if (inserted) groups.push_back({kernel.name, kernel.mangled, 0, 0, kernel.grid, kernel.block});
    KernelGroup& group = groups[it->second];
    ++group.launches;
    group.total_ns += duration_ns(kernel.start_ns, kernel.end_ns);
  }
  std::sort(groups.begin(), groups.end(), [](const KernelGroup& a, const KernelGroup& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return std::tie(a.name, a.mangled) < std::tie(b.name, b.mangled);
  });
  return groups;
}

KernelShare candidate_share(std::span<const KernelRecord> kernels,
                            const std::unordered_set<std::string>& candidate_names) {
  KernelShare result;
  for (const KernelRecord& kernel : kernels) {
    const std::uint64_t duration = duration_ns(kernel.start_ns, kernel.end_ns);
    result.kernel_ns += duration;
    if (candidate_names.contains(kernel.mangled) || candidate_names.contains(kernel.name)) {
      result.candidate_ns += duration;
      ++result.candidate_launches;
    }
  }
  result.share =
      result.kernel_ns > 0 ? static_cast<double>(result.candidate_ns) / static_cast<double>(result.kernel_ns) : 0.0;
  return result;
}

}  // namespace dicebench::timing
