// SuiteSession::review across the C ABI: a 1.0 suite table (no review) finds nothing, a 1.1
// table's findings arrive as evaluation flags, a flag outside the host's vocabulary is the
// plugin's error, naming it, and a failing review is the plugin's own error line. The tables are built here, in-process, as a plugin would export them.
#include "fake_suite_table.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

using namespace dicebench;

namespace {

namespace fake = dicebench::test::fake_suite;
using fake::open_session;

const char* g_flag = "backend_unused";  // what the table's review reports

dicebench_status extract(const dicebench_suite*, dicebench_str, dicebench_text_sink, void*, dicebench_error*) { return DICEBENCH_NOT_FOUND; }
dicebench_status review(const dicebench_suite*, size_t index, dicebench_str candidate, dicebench_flag_sink sink, void* user,
                        dicebench_error* error) {
  if (index != 0) {
    std::snprintf(error->message, sizeof(error->message), "no problem %zu", index);
    return DICEBENCH_FAILED;
  }
  const std::string detail = "read " + std::to_string(candidate.size) + " bytes";
  sink(user, {g_flag, std::strlen(g_flag)}, {detail.data(), detail.size()});
  return DICEBENCH_OK;
}

const dicebench_suite_api kTable = {sizeof(dicebench_suite_api), &fake::open, &fake::close, &fake::describe, &fake::problem_count,
                                    &fake::problem, &fake::build_prompt, &extract, &review, nullptr};
// A plugin built against ABI 1.0: its table ends before review (whatever memory lies after it).
const dicebench_suite_api kTable10 = {offsetof(dicebench_suite_api, optional_review), &fake::open, &fake::close, &fake::describe, &fake::problem_count,
                                      &fake::problem, &fake::build_prompt, &extract, &review, nullptr};

}  // namespace

TEST_CASE("a suite's review findings arrive as evaluation flags") {
  const auto session = open_session(kTable);
  g_flag = "backend_unused";
  const auto found = session.review(0, "print(1)");
  REQUIRE_MESSAGE(found.ok(), found.error().message);
  REQUIRE(found->size() == 1);
  CHECK(found->front().first == results::EvaluationFlag::backend_unused);
  CHECK(found->front().second == "read 8 bytes");
  CHECK(session.index_of({1, 1}) == 0);
  CHECK_FALSE(session.index_of({2, 1}).has_value());
}

TEST_CASE("a suite plugin built against ABI 1.0 has no review, and finds nothing") {
  const auto session = open_session(kTable10);
  const auto found = session.review(0, "print(1)");
  REQUIRE(found.ok());
  CHECK(found->empty());
}

TEST_CASE("a review reporting a flag outside the vocabulary is an error naming the plugin, and a failing one its own line") {
  const auto session = open_session(kTable);
  g_flag = "looks_fishy";
  const auto unknown = session.review(0, "x");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message ==
        "/plugins/libdicebench-suite-test.so: review reported the flag 'looks_fishy', which is not an evaluation flag");
  g_flag = "backend_unused";
  const auto failed = session.review(5, "x");
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "no problem 5");  // the plugin's own line, as for its other calls
}
