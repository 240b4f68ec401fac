// SuiteSession::extract across the C ABI: a 1.2 suite table (whose table ends before
// optional_extract_problem, whatever lies past it) extracts through extract and sends no details;
// a 1.3 table's optional_extract_problem gets the problem index and its details arrive as one JSON
// object, also without a candidate; details that are not a JSON object, and a failing extraction,
// are errors naming the plugin or in its own line. A 1.4 table offers its problems as spans to fill
// (optional_infill, optional_extract_span); a 1.3 table, or one with only one of the two calls,
// offers none. The tables are built here, in-process.
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
dicebench_status extract(const dicebench_suite*, dicebench_str completion, dicebench_text_sink sink, void* user,
                         dicebench_error*) {
  const std::string text(completion.data, completion.size);
  if (text == "none") return DICEBENCH_NOT_FOUND;
  const std::string candidate = "whole:" + text;
  sink(user, {candidate.data(), candidate.size()});
  return DICEBENCH_OK;
}
// Per problem: "<index>:<completion>"; "none" holds no candidate but still has details.
dicebench_status extract_problem(const dicebench_suite*, size_t index, dicebench_str completion,
                                 dicebench_text_sink sink, dicebench_text_sink details_sink, void* user,
                                 dicebench_error* error) {
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

// Spans: problem i is "before<i>" + span + "after<i>", its reference span 7 bytes long.
std::string g_before[2] = {"before0", "before1"}, g_after[2] = {"after0", "after1"};
dicebench_status infill(const dicebench_suite*, size_t index, dicebench_infill* out, dicebench_error* error) {
  if (index >= 2) {
    std::snprintf(error->message, sizeof(error->message), "no problem %zu", index);
    return DICEBENCH_FAILED;
  }
  *out = {{g_before[index].data(), g_before[index].size()}, {g_after[index].data(), g_after[index].size()}, 7};
  return DICEBENCH_OK;
}
// The span verbatim between its problem's two parts.
dicebench_status extract_span(const dicebench_suite*, size_t index, dicebench_str span, dicebench_text_sink sink,
                              dicebench_text_sink details_sink, void* user, dicebench_error*) {
  details_sink(user, {g_details.data(), g_details.size()});
  const std::string candidate = g_before[index] + std::string(span.data, span.size) + g_after[index];
  sink(user, {candidate.data(), candidate.size()});
  return DICEBENCH_OK;
}

const dicebench_suite_api kTable14 = {sizeof(dicebench_suite_api),
                                      &fake::open,
                                      &fake::close,
                                      &fake::describe,
                                      &fake::problem_count,
                                      &fake::problem,
                                      &fake::build_prompt,
                                      &extract,
                                      nullptr,
                                      &extract_problem,
                                      nullptr,
                                      0,
                                      nullptr,
                                      &infill,
                                      &extract_span,
                                      nullptr};
const dicebench_suite_api kTable14NoExtractSpan = {sizeof(dicebench_suite_api),
                                                   &fake::open,
                                                   &fake::close,
                                                   &fake::describe,
                                                   &fake::problem_count,
                                                   &fake::problem,
                                                   &fake::build_prompt,
                                                   &extract,
                                                   nullptr,
                                                   &extract_problem,
                                                   nullptr,
                                                   0,
                                                   nullptr,
                                                   &infill,
                                                   nullptr,
                                                   nullptr};
// Built against ABI 1.3: the table ends before optional_infill, whatever lies past it.
const dicebench_suite_api kTable13WithSpansPast = {offsetof(dicebench_suite_api, optional_infill),
                                                   &fake::open,
                                                   &fake::close,
                                                   &fake::describe,
                                                   &fake::problem_count,
                                                   &fake::problem,
                                                   &fake::build_prompt,
                                                   &extract,
                                                   nullptr,
                                                   &extract_problem,
                                                   nullptr,
                                                   0,
                                                   nullptr,
                                                   &infill,
                                                   &extract_span,
                                                   nullptr};
const dicebench_suite_api kTable13 = {sizeof(dicebench_suite_api),
                                      &fake::open,
                                      &fake::close,
                                      &fake::describe,
                                      &fake::problem_count,
                                      &fake::problem,
                                      &fake::build_prompt,
                                      &extract,
                                      nullptr,
                                      &extract_problem,
                                      nullptr,
                                      0,
                                      nullptr,
                                      nullptr,
                                      nullptr,
                                      nullptr};
// A plugin built against ABI 1.2: its table ends before optional_extract_problem (whatever lies after it).
const dicebench_suite_api kTable12 = {offsetof(dicebench_suite_api, optional_extract_problem),
                                      &fake::open,
                                      &fake::close,
                                      &fake::describe,
                                      &fake::problem_count,
                                      &fake::problem,
                                      &fake::build_prompt,
                                      &extract,
                                      nullptr,
                                      &extract_problem,
                                      nullptr,
                                      0,
                                      nullptr,
                                      nullptr,
                                      nullptr,
                                      nullptr};

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

TEST_CASE("an ABI 1.4 suite offers spans to fill and assembles a span verbatim, older or partial tables offer none") {
  g_details = R"({"infill_exact_match": false, "infill_edit_distance": 3})";
  const auto session = open_session(kTable14);
  REQUIRE(session.offers_infill());
  const auto span = session.infill(1);
  REQUIRE_MESSAGE(span.ok(), span.error().message);
  CHECK(span->before == "before1");
  CHECK(span->after == "after1");
  CHECK(span->reference_span_bytes == 7);
  const auto failed = session.infill(5);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "no problem 5");
  const auto filled = session.extract_span(0, "  x = 1\n");
  REQUIRE_MESSAGE(filled.ok(), filled.error().message);
  CHECK(filled->candidate == "before0  x = 1\nafter0");
  CHECK(filled->details_json == R"({"infill_edit_distance":3,"infill_exact_match":false})");
  // The stored prompt of a span is its JSON description.
  CHECK(host::infill_prompt_record(*span) ==
        R"({"infill":{"before":"before1","after":"after1","reference_span_bytes":7}})");

  for (const auto* table : {&kTable13, &kTable13WithSpansPast, &kTable14NoExtractSpan}) {
    const auto older = open_session(*table);
    CHECK_FALSE(older.offers_infill());
    const auto none = older.infill(0);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.find("has no spans to fill") != std::string::npos);
    CHECK_FALSE(older.extract_span(0, "x").ok());
  }
}
