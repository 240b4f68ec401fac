// Where a run's evaluation time went (results/report/time_breakdown.hpp), against hand-computed sums:
// phase groups per level and in total, load waits by compile path, the toolchain pool's figures,
// the timing loops per call, the slowest candidates and their reasons; every phase the evaluator
// records has one group.
#include "planned_run.hpp"
#include "results/report/time_breakdown.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace dicebench;
using namespace dicebench::results;
using namespace dicebench::results::testing;

TEST_CASE("every phase the evaluator records is in exactly one group, and a re-judged one in rejudged") {
  for (const Phase phase : kAllPhases) {
    int groups = 0;
    for (const auto& group : kPhaseGroups)
      for (const Phase member : group.members) groups += member == phase;
    CHECK_MESSAGE(groups == 1, phase_name(phase));
  }
  std::set<std::string_view> names;
  for (const auto group : time_groups()) CHECK(names.insert(group).second);
  CHECK(names.count("rejudged"));
}

TEST_CASE("the breakdown sums phases by group and level, splits load waits by path, and names the slowest") {
  TempDir dir;
  auto store = open_store(dir.file("results.db"));
  const auto problems = std::vector<ProblemRow>{problem(1, 1, "A"), problem(2, 1, "B"), problem(11, 2, "C")};
  const std::string fast =
      R"({"seconds": 1.0, "latency_seconds": 6.0, "phases": {"slot_wait": 0.5, "prepare": 0.1, "trials": 0.2, "timing": 0.2},
      "timed_calls": {"calls": 100, "checked": 13, "batches": 4, "fresh_placements": 20, "loop_s": 0.19, "batches_s": 0.05,
                      "compares_s": 0.02}})";
  const std::string built = R"({"seconds": 2.0, "latency_seconds": 70.0, "phases": {"slot_wait": 1.5, "init": 0.5},
      "toolchain": {"builds": 1, "cache_hits": 0, "failures": 0, "queued_seconds": 3.0, "build_seconds": 50.0}})";
  const std::string rejudged =
      R"({"seconds": 3.0, "latency_seconds": 80.0, "phases": {"trials": 1.0, "fastpath_trials": 0.5,
      "fastpath_prepare": 0.25}, "fastpath_outcome": {"verdict": "runtime_error"},
      "toolchain": {"builds": 1, "cache_hits": 1, "failures": 0, "queued_seconds": 0.0, "build_seconds": 0.0}})";
  const std::string older =
      R"({"seconds": 4.0, "timed_calls": {"calls": 50, "checked": 5}})";  // stored before latency,
                                                                          // the pool and loop times existed
  const auto run =
      planned_run(store,
                  {{.problem = 1, .index = 0, .verdict = Verdict::correct, .speedup = 2.0, .details_json = fast},
                   {.problem = 1,
                    .index = 1,
                    .verdict = Verdict::correct,
                    .speedup = 1.0,
                    .details_json = built,
                    .compile_path = "fallback"},
                   {.problem = 2,
                    .index = 0,
                    .verdict = Verdict::runtime_error,
                    .details_json = rejudged,
                    .compile_path = "fallback"},
                   {.problem = 11, .index = 0, .verdict = Verdict::output_mismatch, .details_json = older}},
                  problems);
  auto breakdown = time_breakdown(store, run, 2);
  REQUIRE(breakdown.ok());
  REQUIRE(breakdown->levels.size() == 2);
  const LevelTime& one = breakdown->levels[0];
  CHECK(one.level == 1);
  CHECK(one.candidates == 3);
  CHECK(one.gpu_seconds == doctest::Approx(6.0));
  CHECK(one.groups.at("load_wait") == doctest::Approx(2.0));
  CHECK(one.groups.at("reference") == doctest::Approx(0.1));
  CHECK(one.groups.at("trials") == doctest::Approx(1.7));
  CHECK(one.groups.at("timing") == doctest::Approx(0.2));
  CHECK(one.groups.at("rejudged") == doctest::Approx(0.75));
  CHECK(one.load_wait_by_path.at("nvrtc") == doctest::Approx(0.5));
  CHECK(one.load_wait_by_path.at("fallback") == doctest::Approx(1.5));
  CHECK(one.rejudged == 1);
  CHECK(one.builds == 2);
  CHECK(one.build_cache_hits == 1);
  CHECK(one.build_seconds == doctest::Approx(50.0));
  CHECK(one.build_queue_seconds == doctest::Approx(3.0));
  CHECK(one.latency_median == doctest::Approx(70.0));
  CHECK(one.latency_mean == doctest::Approx(52.0));
  CHECK(one.latency_max == doctest::Approx(80.0));
  CHECK(one.timed_calls == 100);
  CHECK(one.timing_loop_seconds == doctest::Approx(0.19));
  CHECK(one.timing_batches_seconds == doctest::Approx(0.05));
  CHECK(one.timing_compares_seconds == doctest::Approx(0.02));
  const LevelTime& two = breakdown->levels[1];
  CHECK(two.candidates == 1);
  CHECK(two.gpu_seconds == doctest::Approx(4.0));
  CHECK(two.groups.empty());
  CHECK(two.timed_calls == 0);  // its loop's time was not recorded: its calls are not counted either
  CHECK(breakdown->total.candidates == 4);
  CHECK(breakdown->total.gpu_seconds == doctest::Approx(10.0));

  REQUIRE(breakdown->slowest.size() == 2);
  CHECK(breakdown->slowest[0].problem_id == 2);
  CHECK(breakdown->slowest[0].latency_seconds == doctest::Approx(80.0));
  CHECK(breakdown->slowest[0].reason.find("re-judged with torch's toolchain (the fast path said runtime_error)") !=
        std::string::npos);
  CHECK(breakdown->slowest[0].reason.find("cached") != std::string::npos);
  CHECK(breakdown->slowest[1].reason == "torch's toolchain: 50 s building, 3 s queued");

  const std::string text = format_time_breakdown(*breakdown);
  CHECK(text.find("load wait by compile path: fallback 1.5 s, nvrtc 0.5 s") != std::string::npos);
  CHECK(text.find("level 1 problem 2 sample 0: 80.0 s (3.0 s judged), runtime_error") != std::string::npos);
  CHECK(
      text.find(
          "timing loops: 100 calls, 1.90 ms a call (the reference making inputs 0.50, comparing 0.20; the candidate's "
          "side, its calls included, 1.20)") != std::string::npos);
  const auto json = time_breakdown_json(*breakdown);
  CHECK(json.at("levels").size() == 2);
  CHECK(json.at("total").at("groups").at("rejudged") == doctest::Approx(0.75));
  CHECK(json.at("total").at("timing_loops").at("calls") == 100);
  CHECK(json.at("total").at("timing_loops").at("loop_seconds") == doctest::Approx(0.19));
  CHECK(json.at("slowest")[1].at("reason") == "torch's toolchain: 50 s building, 3 s queued");
}

TEST_CASE("a run without evaluations has an empty breakdown and prints nothing") {
  TempDir dir;
  auto store = open_store(dir.file("results.db"));
  const auto run = planned_run(store, {}, {problem(1, 1, "A")});
  auto breakdown = time_breakdown(store, run);
  REQUIRE(breakdown.ok());
  CHECK(breakdown->total.candidates == 0);
  CHECK(format_time_breakdown(*breakdown).empty());
}
