// Tests of the shared text helpers: splitting, trimming, edit distance, did-you-mean.
#include "core/base/text.hpp"

#include <doctest/doctest.h>

using namespace dicebench;

TEST_CASE("split keeps empty fields and trim strips whitespace") {
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string>{""});
  CHECK(trim("  x y \n") == "x y");
  CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
}

TEST_CASE("edit distance and did-you-mean") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(did_you_mean("dice-8", {"dice-8b", "dice-4b", "qwen3-8b"}) == "did you mean 'dice-8b' or 'dice-4b'?");
  CHECK(did_you_mean("kernelbench-l5", {"kernelbench-l1", "kernelbench-l2"}) ==
        "did you mean 'kernelbench-l1' or 'kernelbench-l2'?");
  CHECK(did_you_mean("zzzzzz", {"dice-8b"}).empty());
}

TEST_CASE("utc timestamps look like ISO 8601 with Z") {
  const std::string now = utc_now_iso8601();
  REQUIRE(now.size() == 20);
  CHECK(now[4] == '-');
  CHECK(now[10] == 'T');
  CHECK(now.back() == 'Z');
}
