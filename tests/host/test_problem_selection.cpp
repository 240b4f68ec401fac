// Tests of problem selections ("1-4,7").
#include "core/host/problem_selection.hpp"

#include <doctest/doctest.h>

using namespace dicebench::host;

TEST_CASE("selections parse ids and ranges") {
  auto ids = parse_problem_selection("1-4, 7,10-11");
  REQUIRE(ids.ok());
  CHECK(*ids == std::set<int64_t>{1, 2, 3, 4, 7, 10, 11});
  CHECK(format_problem_selection(*ids) == "1-4,7,10-11");
}

TEST_CASE("bad selections are one-line errors") {
  auto reversed = parse_problem_selection("4-1");
  REQUIRE_FALSE(reversed.ok());
  CHECK(reversed.error().message == "bad problem selection '4-1': range 4-1 ends before it starts");
  auto word = parse_problem_selection("1,x");
  REQUIRE_FALSE(word.ok());
  CHECK(word.error().message.find("'x' is not a problem id") != std::string::npos);
  CHECK_FALSE(parse_problem_selection("").ok());
  CHECK_FALSE(parse_problem_selection("-3").ok());
}

TEST_CASE("selected ids must exist in the suite") {
  CHECK(check_selection({1, 2}, {1, 2, 3}, "kernelbench-l1").ok());
  auto missing = check_selection({2, 101, 102}, {1, 2, 3}, "kernelbench-l1");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "kernelbench-l1 has no problem 101-102 (it has 1-3)");
}
