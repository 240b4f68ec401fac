// SuiteSession::extract across the C ABI: a 1.2 suite table (whose table ends before
// optional_extract_problem, whatever lies past it) extracts through extract and sends no details;
// a 1.3 table's optional_extract_problem gets the problem index and its details arrive as one JSON
// object, also without a candidate; details that are not a JSON object, and a failing extraction,
// are errors naming the plugin or in its own line. The tables are built here, in-process.
#include "fake_suite_table.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdio>
#include <string>

using namespace dicebench;

namespace {

namespace fake = dicebench::test::fake_suite;
using fake::open_session;

std::string g_details = R"({"infill_exact_match": true, "infill_edit_distance": 0})";  // what extract_problem sends

// The one-argument extraction: the completion itself, "none" holding no candidate.
dicebench_status extract(const dicebench_suite*, dicebench_str completion, dicebench_text_sink sink, void* user, dicebench_error*) {
  const std::string text(completion.data, completion.size);
  if (text == "none") return DICEBENCH_NOT_FOUND;
  const std::string candidate = "whole:" + text;
  sink(user, {candidate.data(), candidate.size()});
  return DICEBENCH_OK;
}
// Per problem: "<index>:<completion>"; "none" holds no candidate but still has details.
dicebench_status extract_problem(const dicebench_suite*, size_t index, dicebench_str completion, dicebench_text_sink sink,
                                 dicebench_text_sink details_sink, void* user, dicebench_error* error) {
  if (index >= 2) {
    std::snprintf(error->message, sizeof(error->message), "no problem %zu", index);
    return DICEBENCH_FAILED;
  }
  details_sink(user, {g_details.data(), g_details.size()});
  const std::string text(completion.data, completion.size);
  if (text == "none") return DICEBENCH_NOT_FOUND;
  const std::string candidate = std::to_string(index) + ":" + text;
  sink(user, {candidate.data(), candidate.size()});
  return DICEBENCH_OK;
}

const dicebench_suite_api kTable13 = {sizeof(dicebench_suite_api), &fake::open, &fake::close, &fake::describe, &fake::problem_count, &fake::problem,
                                      &fake::build_prompt, &extract, nullptr, &extract_problem, nullptr, 0, nullptr};
// A plugin built against ABI 1.2: its table ends before optional_extract_problem (whatever lies after it).
const dicebench_suite_api kTable12 = {offsetof(dicebench_suite_api, optional_extract_problem), &fake::open, &fake::close, &fake::describe,
                                      &fake::problem_count, &fake::problem, &fake::build_prompt, &extract, nullptr, &extract_problem, nullptr, 0, nullptr};

}  // namespace

TEST_CASE("a suite plugin built against ABI 1.2 extracts through extract, without details") {
  const auto session = open_session(kTable12);
  const auto found = session.extract(1, "code");
  REQUIRE_MESSAGE(found.ok(), found.error().message);
  CHECK(found->candidate == "whole:code");
  CHECK(found->details_json.empty());
  const auto none = session.extract(1, "none");
  REQUIRE(none.ok());
  CHECK_FALSE(none->candidate.has_value());
}

TEST_CASE("an ABI 1.3 suite extracts per problem and sends details, also without a candidate") {
  g_details = R"({"infill_exact_match": true, "infill_edit_distance": 0})";
  const auto session = open_session(kTable13);
  const auto found = session.extract(1, "code");
  REQUIRE_MESSAGE(found.ok(), found.error().message);
  CHECK(found->candidate == "1:code");
  CHECK(found->details_json == R"({"infill_edit_distance":0,"infill_exact_match":true})");
  const auto none = session.extract(0, "none");
  REQUIRE(none.ok());
  CHECK_FALSE(none->candidate.has_value());
  CHECK_FALSE(none->details_json.empty());

  const auto failed = session.extract(7, "code");
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "no problem 7");

  g_details = "[1, 2]";
  const auto bad = session.extract(0, "code");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "/plugins/libdicebench-suite-test.so: extract sent details that are not a JSON object: [1, 2]");
}
