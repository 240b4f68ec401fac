// Tests of which sample a slot evaluates next: the first whose candidate is ready, and claiming.
#include "core/run/sample_picking.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace dicebench;
using run::LoadState;

namespace {

results::SampleRow sample(int64_t id, std::optional<std::string> candidate) {
  results::SampleRow row;
  row.id = id;
  row.candidate = std::move(candidate);
  return row;
}

const auto kNever = [] { return false; };

}  // namespace

TEST_CASE("the first sample that needs no compile wait is picked") {
  const auto a = sample(1, "a"), b = sample(2, "b"), none = sample(3, std::nullopt);
  std::map<std::string, LoadState> states = {{"a", LoadState::loading}, {"b", LoadState::ready}};
  const auto state = [&](const std::string& c) { return states.at(c); };
  CHECK(run::pick_ready({&a, &b, &none}, state, kNever) == 1);
  CHECK(run::pick_ready({&a, &none, &b}, state, kNever) == 1);  // no candidate: nothing to wait for
  states["b"] = LoadState::queued;
  states["a"] = LoadState::queued;
  CHECK(run::pick_ready({&a, &b}, state, kNever) == 0);  // nothing loading: the first
}

TEST_CASE("picking polls while candidates load, and gives up when stopping") {
  const auto a = sample(1, "a"), b = sample(2, "b");
  int calls = 0;
  const auto state = [&](const std::string& c) {
    ++calls;
    return c == "b" && calls > 6 ? LoadState::ready : LoadState::loading;
  };
  CHECK(run::pick_ready({&a, &b}, state, kNever, std::chrono::milliseconds(1)) == 1);
  CHECK(calls > 6);
  bool stop = false;
  int polls = 0;
  const auto always_loading = [&](const std::string&) {
    if (++polls == 3) stop = true;
    return LoadState::loading;
  };
  CHECK(run::pick_ready({&a, &b}, always_loading, [&] { return stop; }, std::chrono::milliseconds(1)) == 0);
}

TEST_CASE("slots claim from one cursor, prefetch what they claim, and claim again as they take") {
  const std::vector<results::SampleRow> todo = {sample(1, "a"), sample(2, std::nullopt), sample(3, "c"), sample(4, "d"),
                                                sample(5, "e")};
  std::atomic<size_t> cursor{0};
  std::vector<std::string> prefetched;
  const run::CandidateLoader loader{[&](const std::string& c) { prefetched.push_back(c); },
                                    [](const std::string& c) { return c == "c" ? LoadState::ready : LoadState::queued; }};
  run::ClaimedSamples first(todo, cursor, loader, 1);  // claims samples 1 and 2
  run::ClaimedSamples second(todo, cursor, loader, 1);  // claims 3 and 4
  CHECK(prefetched == std::vector<std::string>{"a", "c", "d"});
  CHECK(second.take(kNever).id == 3);  // ready; 5 is claimed in its place
  CHECK(prefetched.back() == "e");
  CHECK(first.take(kNever).id == 2);  // no candidate: nothing to wait for
  CHECK(first.take(kNever).id == 1);
  CHECK(first.empty());
  CHECK(second.take(kNever).id == 4);  // nothing loading: the first
  CHECK(second.take(kNever).id == 5);
  CHECK(second.empty());
}
