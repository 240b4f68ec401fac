// OncePerKey: the first caller of a key computes its value while the others wait for it; a failure
// is not kept, so the next caller computes again; keys are independent.
#include "harness/client/once_per_key.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace dicebench;
using dicebench::harness::OncePerKey;

TEST_CASE("threads asking for one key at once get the value one of them computed") {
  OncePerKey<int> values;
  std::atomic<int> computations{0}, computed_here{0};
  std::vector<std::thread> threads;
  std::vector<int> seen(6, 0);
  for (size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&, i] {
      auto value = values.get("problem", [&]() -> Result<int> {
        ++computations;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // long enough for every thread to ask
        return 42;
      });
      seen[i] = value ? value->value : -1;
      computed_here += value && value->computed;
    });
  for (auto& thread : threads) thread.join();
  CHECK(computations == 1);
  CHECK(computed_here == 1);
  for (int value : seen) CHECK(value == 42);
}

TEST_CASE("a failed computation is not kept, and keys are independent") {
  OncePerKey<int> values;
  auto failed = values.get("a", []() -> Result<int> { return make_error("the reference failed"); });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "the reference failed");
  auto again = values.get("a", []() -> Result<int> { return 7; });
  REQUIRE(again.ok());
  CHECK(again->value == 7);
  CHECK(again->computed);
  auto known = values.get("a", []() -> Result<int> { return 8; });
  CHECK(known->value == 7);
  CHECK_FALSE(known->computed);
  auto other = values.get("b", []() -> Result<int> { return 9; });
  CHECK(other->value == 9);
  CHECK(other->computed);
}
