// Tests of problem selections: "1-4,7" for a single-level suite, "1/1-10,2/5" (LEVEL/IDS items)
// for a suite over several levels, and their one-line errors.
#include "core/host/problem_selection.hpp"

#include <doctest/doctest.h>

using namespace dicebench;
using namespace dicebench::host;

namespace {

std::vector<ProblemKey> level_one(std::vector<int64_t> ids) {
  std::vector<ProblemKey> out;
  for (const int64_t id : ids) out.push_back({1, id});
  return out;
}

// What --suite kernelbench has on the project's test data.
const std::vector<ProblemKey> kWhole = {{1, 1}, {1, 2}, {1, 10}, {2, 1}, {3, 1}, {3, 2}, {3, 3}};

std::string error_of(const Result<std::set<ProblemKey>>& result) {
  REQUIRE_FALSE(result.ok());
  return result.error().message;
}

}  // namespace

TEST_CASE("selections parse ids and ranges, with no level") {
  auto ids = parse_problem_selection("1-4, 7,10-11");
  REQUIRE(ids.ok());
  CHECK(*ids == std::set<ProblemKey>{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 7}, {0, 10}, {0, 11}});
  CHECK(format_problem_selection(*ids) == "1-4,7,10-11");
}

TEST_CASE("LEVEL/IDS items name problems of one level each") {
  auto keys = parse_problem_selection("1/1-3, 2/5,3/1-2,3/7");
  REQUIRE(keys.ok());
  CHECK(*keys == std::set<ProblemKey>{{1, 1}, {1, 2}, {1, 3}, {2, 5}, {3, 1}, {3, 2}, {3, 7}});
  CHECK(format_problem_selection(*keys) == "1/1-3,2/5,3/1-2,3/7");
  // Written back and read again, the same problems.
  CHECK(*parse_problem_selection(format_problem_selection(*keys)) == *keys);
}

TEST_CASE("bad selections are one-line errors") {
  CHECK(error_of(parse_problem_selection("4-1")) == "bad problem selection '4-1': range 4-1 ends before it starts");
  CHECK(error_of(parse_problem_selection("1,x")).find("'x' is not a problem id") != std::string::npos);
  CHECK_FALSE(parse_problem_selection("").ok());
  CHECK(error_of(parse_problem_selection("-3"))
            .starts_with("bad problem selection '-3': '-3' is not a problem id (ids are 0 or more"));
  CHECK(error_of(parse_problem_selection("1,,2"))
            .starts_with("bad problem selection '1,,2': an empty item between commas"));
  CHECK(error_of(parse_problem_selection("1/1,x/2")) ==
        "bad problem selection '1/1,x/2': 'x' is not a level (use ids and ranges like 1-4,7, or LEVEL/IDS items like "
        "1/1-10,2/5)");
  CHECK(error_of(parse_problem_selection("0/1")) ==
        "bad problem selection '0/1': no level 0 in '0/1' (levels start at 1)");
  CHECK(error_of(parse_problem_selection("2/")).find("'' is not a problem id") != std::string::npos);
  CHECK(error_of(parse_problem_selection("2/3/4")).find("'3/4' is not a problem id") != std::string::npos);
  CHECK(error_of(parse_problem_selection("2/5-3")) == "bad problem selection '2/5-3': range 5-3 ends before it starts");
  for (const char* text : {"4-1", "1,x", "", "0/1", "2/", "1/1,x/2"})
    CHECK(error_of(parse_problem_selection(text)).find('\n') == std::string::npos);
}

TEST_CASE("a single-level suite resolves plain ids, and LEVEL/IDS of its own level") {
  const auto plain = resolve_selection(*parse_problem_selection("1,2"), level_one({1, 2, 3}), "kernelbench-l1");
  REQUIRE(plain.ok());
  CHECK(*plain == std::set<ProblemKey>{{1, 1}, {1, 2}});
  const auto leveled = resolve_selection(*parse_problem_selection("1/3"), level_one({1, 2, 3}), "kernelbench-l1");
  REQUIRE(leveled.ok());
  CHECK(*leveled == std::set<ProblemKey>{{1, 3}});
  CHECK(error_of(resolve_selection(*parse_problem_selection("2,101-102"), level_one({1, 2, 3}), "kernelbench-l1")) ==
        "kernelbench-l1 has no problem 101-102 (it has 1-3)");
  CHECK(error_of(resolve_selection(*parse_problem_selection("2/1"), level_one({1, 2, 3}), "kernelbench-l1")) ==
        "kernelbench-l1 has no problem 2/1 (it has level 1 1-3)");
}

TEST_CASE("a suite over several levels takes LEVEL/IDS and refuses plain ids") {
  const auto keys = resolve_selection(*parse_problem_selection("1/1-2,2/1,3/2-3"), kWhole, "kernelbench");
  REQUIRE(keys.ok());
  CHECK(*keys == std::set<ProblemKey>{{1, 1}, {1, 2}, {2, 1}, {3, 2}, {3, 3}});
  CHECK(error_of(resolve_selection(*parse_problem_selection("1/1,5"), kWhole, "kernelbench")) ==
        "kernelbench covers levels 1, 2, 3: name its problems as LEVEL/IDS, e.g. 1/5 (plain id 5 names no level)");
  CHECK(error_of(resolve_selection(*parse_problem_selection("1/1,2/2-3,4/1"), kWhole, "kernelbench")) ==
        "kernelbench has no problem 2/2-3,4/1 (it has level 1 1-2,10, level 2 1, level 3 1-3)");
}
