// The arithmetic over recorded device activity (harness/timing/activity_records.hpp): union of
// intervals, a call's span / busy / host figures, the per-kernel breakdown, the candidate's share,
// and the name helpers. Synthetic records with hand-computed expectations; no GPU involved.
#include <doctest/doctest.h>

#include <vector>

#include "harness/timing/activity_records.hpp"
#include "harness/timing/record_names.hpp"

using namespace dicebench::timing;

namespace {

KernelRecord kernel(std::string mangled, std::uint64_t start, std::uint64_t end, std::uint32_t stream = 7,
                    std::array<std::int32_t, 3> grid = {1, 1, 1}, std::array<std::int32_t, 3> block = {32, 1, 1}) {
  KernelRecord k;
  k.name = demangle(mangled);
  k.mangled = std::move(mangled);
  k.start_ns = start;
  k.end_ns = end;
  k.stream = stream;
  k.grid = grid;
  k.block = block;
  return k;
}

// A kernel launched by the API call with this CUPTI correlation ID.
KernelRecord launched(std::uint32_t correlation, KernelRecord k) {
  k.correlation = correlation;
  return k;
}

MemcpyRecord copy(std::uint64_t start, std::uint64_t end, std::uint32_t stream = 7, std::uint32_t correlation = 0) {
  return {"HtoD", 4096, start, end, stream, 0, correlation};
}

MemsetRecord set(std::uint64_t start, std::uint64_t end, std::uint32_t stream = 7, std::uint32_t correlation = 0) {
  return {1 << 20, start, end, stream, 0, correlation};
}

std::uint64_t union_of(std::vector<Interval> intervals) { return union_length_ns(intervals); }

}  // namespace

TEST_CASE("union of intervals") {
  CHECK(union_of({}) == 0);
  CHECK(union_of({{10, 30}}) == 20);
  SUBCASE("disjoint intervals add up") { CHECK(union_of({{0, 10}, {20, 25}, {100, 101}}) == 16); }
  SUBCASE("overlapping intervals count once") { CHECK(union_of({{0, 10}, {5, 15}}) == 15); }
  SUBCASE("nested intervals add nothing") { CHECK(union_of({{0, 100}, {10, 20}, {30, 40}, {99, 100}}) == 100); }
  SUBCASE("touching intervals join") { CHECK(union_of({{0, 10}, {10, 20}}) == 20); }
  SUBCASE("unsorted input") { CHECK(union_of({{50, 60}, {0, 10}, {5, 20}, {55, 58}}) == 30); }
  SUBCASE("a chain of overlaps merges into one") { CHECK(union_of({{30, 45}, {0, 10}, {8, 20}, {19, 31}}) == 45); }
  SUBCASE("empty and reversed intervals contribute nothing") { CHECK(union_of({{5, 5}, {10, 3}, {20, 22}}) == 2); }
  SUBCASE("duplicates count once") { CHECK(union_of({{1, 4}, {1, 4}, {1, 4}}) == 3); }
}

TEST_CASE("a call on two streams: span, busy and host time") {
  // begin at 1000, host end (after the synchronize) at 5000.
  ActivityLog log;
  log.kernels = {kernel("k_side", 1200, 1500, 8), kernel("k_main", 1100, 1300, 7)};  // overlap on two streams
  log.memsets = {set(1400, 1450, 7)};                                                // nested in k_side
  log.memcpys = {copy(2000, 2100, 8)};                                               // disjoint, the last
  const CallRecord call = assemble_call({.begin_ns = 1000, .host_end_ns = 5000}, log);
  CHECK(call.device_work);
  CHECK(call.first_start_ns == 1100);
  CHECK(call.last_end_ns == 2100);
  CHECK(call.span_ns == 1100);       // 2100 - 1000: the device's last end, not the host's sync time
  CHECK(call.busy_ns == 400 + 100);  // [1100,1500] and [2000,2100]
  CHECK(call.host_ns == 4000);
  CHECK(call.span_ns >= call.busy_ns);
  CHECK(call.incomplete == 0);
  CHECK(call.stale == 0);
  // each list sorted by start time
  REQUIRE(call.activity.kernels.size() == 2);
  CHECK(call.activity.kernels[0].mangled == "k_main");
  CHECK(call.activity.kernels[1].mangled == "k_side");
  CHECK(call.activity.kernels[1].stream == 8);
  CHECK(call.activity.memsets.size() == 1);
  CHECK(call.activity.memcpys.size() == 1);
}

TEST_CASE("a call without device work spans its host time") {
  const CallRecord call = assemble_call({.begin_ns = 1000, .host_end_ns = 1750}, {});
  CHECK_FALSE(call.device_work);
  CHECK(call.span_ns == 750);
  CHECK(call.host_ns == 750);
  CHECK(call.busy_ns == 0);
  CHECK(call.first_start_ns == 0);
  CHECK(call.last_end_ns == 0);
}

TEST_CASE("stale, straddling and incomplete records") {
  ActivityLog log;
  log.kernels = {kernel("before", 500, 900),  // ended before begin: stale, left out
                 kernel("untimed", 0, 0),     // no timestamps: incomplete, left out
                 kernel("during", 1500, 1600)};
  log.memcpys = {copy(900, 1200)};  // straddles begin: kept, counted from begin
  log.memsets = {set(1700, 1650)};  // end before start: incomplete
  const CallRecord call = assemble_call({.begin_ns = 1000, .host_end_ns = 3000}, log);
  CHECK(call.stale == 1);
  CHECK(call.incomplete == 2);
  REQUIRE(call.activity.kernels.size() == 1);
  CHECK(call.activity.kernels[0].mangled == "during");
  REQUIRE(call.activity.memcpys.size() == 1);
  CHECK(call.activity.memcpys[0].start_ns == 900);  // the record itself is reported unchanged
  CHECK(call.activity.memsets.empty());
  CHECK(call.first_start_ns == 1000);
  CHECK(call.busy_ns == 200 + 100);  // [1000,1200] and [1500,1600]
  CHECK(call.span_ns == 600);
}

TEST_CASE("device work ending after the host end still sets the span") {
  // A caller that forgot to synchronize: the device's end is what counts.
  ActivityLog log;
  log.kernels = {kernel("late", 1100, 9000)};
  const CallRecord call = assemble_call({.begin_ns = 1000, .host_end_ns = 2000}, log);
  CHECK(call.span_ns == 8000);
  CHECK(call.host_ns == 1000);
  CHECK(call.busy_ns == 7900);
}

TEST_CASE("the marker memset gives the span its origin on the device's clock and leaves the records") {
  // Host begin at 1000; device timestamps run 300 ns ahead of the host's (an offset CUPTI's
  // conversion can leave): the marker starts at 1250, the call's kernel runs 1400-1900.
  ActivityLog log;
  log.memsets = {set(1250, 1252, 42), set(1500, 1510, 7)};
  log.kernels = {kernel("work", 1400, 1900, 7), kernel("earlier", 1100, 1200, 7)};
  const CallRecord call = assemble_call({.begin_ns = 1000, .host_end_ns = 5000}, log, 42u);
  CHECK(call.marker);
  CHECK(call.span_origin_ns == 1250);
  CHECK(call.span_ns == 650);                  // 1900 - 1250, not 1900 - 1000
  REQUIRE(call.activity.memsets.size() == 1);  // the marker is not the call's work
  CHECK(call.activity.memsets[0].stream == 7);
  CHECK(call.stale == 1);  // "earlier" ended before the marker started
  CHECK(call.busy_ns == 500);

  const CallRecord without =
      assemble_call({.begin_ns = 1000, .host_end_ns = 5000}, log, 99u);  // no record on that stream
  CHECK_FALSE(without.marker);
  CHECK(without.span_origin_ns == 1000);
  CHECK(without.span_ns == 900);
}

TEST_CASE("work launched after the marker is the call's even when it ran before the marker") {
  // Other processes hold the compute engine: the marker memset (correlation 10) waits until 1500,
  // while the call's copy (12) already ran on a copy engine at 1100-1300. A kernel launched before
  // the marker (9) that ended before the call's work is earlier work.
  ActivityLog log;
  log.memsets = {set(1500, 1502, 42, 10)};
  log.memcpys = {copy(1100, 1300, 7, 12)};
  log.kernels = {launched(11, kernel("work", 1600, 1900)), launched(9, kernel("earlier", 1050, 1080))};
  const CallRecord call = assemble_call({.begin_ns = 1000, .host_end_ns = 5000}, log, 42u);
  CHECK(call.marker);
  CHECK(call.span_origin_ns == 1100);
  CHECK(call.span_ns == 800);  // 1900 - 1100
  CHECK(call.busy_ns == 200 + 300);
  REQUIRE(call.activity.memcpys.size() == 1);
  REQUIRE(call.activity.kernels.size() == 1);
  CHECK(call.activity.kernels[0].mangled == "work");
  CHECK(call.stale == 1);

  // Without correlation IDs (0: unknown) the copy cannot be told from earlier work: left out.
  log.memcpys[0].correlation = 0;
  const CallRecord unknown = assemble_call({.begin_ns = 1000, .host_end_ns = 5000}, log, 42u);
  CHECK(unknown.span_origin_ns == 1500);
  CHECK(unknown.activity.memcpys.empty());
  CHECK(unknown.stale == 2);
}

TEST_CASE("the runtime is the longer of the device span and the host's own time in the call") {
  // begin() at 1000 issues the marker (device start 1300) and hands over at 1400; the call returns
  // at 1500 (end() entered) and the synchronize returns at 9000.
  ActivityLog log;
  log.memsets = {set(1300, 1302, 42, 10)};
  log.kernels = {launched(11, kernel("first", 1600, 2000)), launched(12, kernel("second", 2100, 3600))};
  const HostTimes host{.begin_ns = 1000, .ready_ns = 1400, .call_end_ns = 1500, .host_end_ns = 9000};

  SUBCASE("device-bound: the device span, without the latency before the first launch") {
    const CallRecord call = assemble_call(host, log, 42u);
    CHECK(call.span_ns == 2300);           // 3600 - 1300: from the marker
    CHECK(call.launch_latency_ns == 300);  // 1600 - 1300
    CHECK(call.call_host_ns == 100);       // 1500 - 1400
    CHECK(call.runtime_ns == 2000);        // 3600 - 1600
  }
  SUBCASE("host-bound: the host's time in the call, work before the first launch included") {
    HostTimes slow = host;
    slow.call_end_ns = 1400 + 5000;  // the call spent 5 us on the host (say, computing on the CPU)
    const CallRecord call = assemble_call(slow, log, 42u);
    CHECK(call.call_host_ns == 5000);
    CHECK(call.runtime_ns == 5000);
  }
  SUBCASE("without the host's call timestamps the runtime is the device span") {
    const CallRecord call = assemble_call({.begin_ns = 1000, .host_end_ns = 9000}, log, 42u);
    CHECK(call.call_host_ns == 0);
    CHECK(call.runtime_ns == 2000);
  }
  SUBCASE("without device work: the host time up to the synchronize, never less") {
    const CallRecord call = assemble_call(host, {}, 42u);
    CHECK_FALSE(call.device_work);
    CHECK(call.launch_latency_ns == 0);
    CHECK(call.runtime_ns == 8000);  // 9000 - 1000, not the 100 ns of the call itself
  }
}

TEST_CASE("per-kernel breakdown") {
  const std::vector<KernelRecord> kernels = {
      kernel("_Z3addPfS_i", 300, 350, 7, {4, 1, 1}, {128, 1, 1}),
      kernel("_Z3addPfS_i", 100, 130, 8, {2, 1, 1}, {256, 1, 1}),  // earliest launch of add
      kernel("relu_kernel", 200, 400, 7, {8, 8, 1}, {16, 16, 1}),
      kernel("_Z3addPfS_i", 500, 530, 7, {4, 1, 1}, {128, 1, 1}),
      kernel("b_tie", 600, 700, 7),
      kernel("a_tie", 800, 900, 7),
  };
  const std::vector<KernelGroup> groups = group_kernels(kernels);
  REQUIRE(groups.size() == 4);
  CHECK(groups[0].mangled == "relu_kernel");
  CHECK(groups[0].launches == 1);
  CHECK(groups[0].total_ns == 200);
  CHECK(groups[0].grid == std::array<std::int32_t, 3>{8, 8, 1});
  CHECK(groups[1].mangled == "_Z3addPfS_i");
  CHECK(groups[1].name == "add(float*, float*, int)");
  CHECK(groups[1].launches == 3);
  CHECK(groups[1].total_ns == 50 + 30 + 30);
  CHECK(groups[1].grid == std::array<std::int32_t, 3>{2, 1, 1});
  CHECK(groups[1].block == std::array<std::int32_t, 3>{256, 1, 1});
  CHECK(groups[2].mangled == "a_tie");  // 100 ns each: ties sorted by name
  CHECK(groups[3].mangled == "b_tie");
  CHECK(group_kernels({}).empty());
}

TEST_CASE("share of kernel time in the candidate's kernels") {
  const std::vector<KernelRecord> kernels = {
      kernel("_Z9my_matmulPKfS0_Pfi", 0, 300),  // the candidate's, matched by mangled name
      kernel("my_relu", 300, 400),              // the candidate's, extern "C"
      kernel("_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT_", 400, 1000),  // PyTorch's
  };
  SUBCASE("matched by mangled or plain name") {
    const KernelShare share = candidate_share(kernels, {"_Z9my_matmulPKfS0_Pfi", "my_relu"});
    CHECK(share.kernel_ns == 1000);
    CHECK(share.candidate_ns == 400);
    CHECK(share.candidate_launches == 2);
    CHECK(share.share == doctest::Approx(0.4));
  }
  SUBCASE("matched by demangled name") {
    const KernelShare share = candidate_share(kernels, {"my_matmul(float const*, float const*, float*, int)"});
    CHECK(share.candidate_ns == 300);
    CHECK(share.share == doctest::Approx(0.3));
  }
  SUBCASE("a candidate that only calls PyTorch ops has share 0") {
    const KernelShare share = candidate_share(kernels, {"my_other_kernel"});
    CHECK(share.candidate_ns == 0);
    CHECK(share.share == 0.0);
  }
  SUBCASE("a bare identifier does not match a C++ kernel") {
    CHECK(candidate_share(kernels, {"my_matmul"}).candidate_ns == 0);
  }
  SUBCASE("no kernels at all") {
    const KernelShare share = candidate_share({}, {"my_relu"});
    CHECK(share.kernel_ns == 0);
    CHECK(share.share == 0.0);
  }
}

TEST_CASE("kernel names and memcpy kinds") {
  CHECK(demangle("_Z10add_kernelPKfPfi") == "add_kernel(float const*, float*, int)");
  CHECK(demangle("_ZN14dicebench_test5scaleILi2EEEvPfi") == "void dicebench_test::scale<2>(float*, int)");
  CHECK(demangle("my_kernel") == "my_kernel");  // extern "C": unchanged
  CHECK(demangle("i") == "i");                  // not read as a type name
  CHECK(demangle("_Z") == "_Z");
  CHECK(demangle("_Zqq_not_a_name") == "_Zqq_not_a_name");
  CHECK(demangle("") == "");
  CHECK(memcpy_kind_name(1) == "HtoD");
  CHECK(memcpy_kind_name(2) == "DtoH");
  CHECK(memcpy_kind_name(8) == "DtoD");
  CHECK(memcpy_kind_name(10) == "PtoP");
  CHECK(memcpy_kind_name(0) == "unknown");
  CHECK(memcpy_kind_name(99) == "unknown");
}
