// SuiteSession::review across the C ABI: a 1.0 suite table (no review) finds nothing, a 1.1
// table's findings arrive as evaluation flags, a flag outside the host's vocabulary is the
// plugin's error, naming it, and a failing review is the plugin's own error line. ABI 1.3: the
// flags a suite declares bound what its review may report, a declared name outside the vocabulary
// refuses the suite, and the modules its candidates import come from their own call; a 1.2 table
// (without those fields) still names its modules in describe(). ABI 1.5: a problem given as its
// source (not one of the suite's) is reviewed by optional_review_source, and a 1.4 table (without
// it) gives such a candidate no review. The tables are built here,
// in-process, as a plugin would export them.
#include "fake_suite_table.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

using namespace dicebench;

namespace {

const char* g_flag = "backend_unused";  // what the table's review reports

namespace fake = dicebench::test::fake_suite;
using fake::open_session;

// As a 1.2 suite's describe() named the modules its candidates import.
dicebench_status describe(const dicebench_suite*, dicebench_text_sink sink, void* user, dicebench_error*) {
  const std::string settings = R"({"candidate_python_modules":["triton"]})";
  sink(user, {settings.data(), settings.size()});
  return DICEBENCH_OK;
}
dicebench_status candidate_modules(const dicebench_suite*, dicebench_text_sink sink, void* user, dicebench_error*) {
  sink(user, {"tilelang", 8});
  return DICEBENCH_OK;
}
dicebench_status extract(const dicebench_suite*, dicebench_str, dicebench_text_sink, void*, dicebench_error*) {
  return DICEBENCH_NOT_FOUND;
}
dicebench_status review(const dicebench_suite*, size_t index, dicebench_str candidate, dicebench_flag_sink sink,
                        void* user, dicebench_error* error) {
  if (index != 0) {
    std::snprintf(error->message, sizeof(error->message), "no problem %zu", index);
    return DICEBENCH_FAILED;
  }
  const std::string detail = "read " + std::to_string(candidate.size) + " bytes";
  sink(user, {g_flag, std::strlen(g_flag)}, {detail.data(), detail.size()});
  return DICEBENCH_OK;
}

// ABI 1.5: the review of a candidate for a problem from elsewhere, which it is given.
dicebench_status review_source(const dicebench_suite*, dicebench_str problem, dicebench_str candidate,
                               dicebench_flag_sink sink, void* user, dicebench_error*) {
  const std::string detail =
      "problem of " + std::to_string(problem.size) + " bytes, candidate of " + std::to_string(candidate.size);
  sink(user, {g_flag, std::strlen(g_flag)}, {detail.data(), detail.size()});
  return DICEBENCH_OK;
}

const dicebench_str kDeclared[] = {{"backend_unused", 14}};
const dicebench_str kDeclaredUnknown[] = {{"looks_fishy", 11}};
const dicebench_suite_api kTable = {sizeof(dicebench_suite_api),
                                    &fake::open,
                                    &fake::close,
                                    &describe,
                                    &fake::problem_count,
                                    &fake::problem,
                                    &fake::build_prompt,
                                    &extract,
                                    &review,
                                    nullptr,
                                    kDeclared,
                                    1,
                                    &candidate_modules,
                                    nullptr,
                                    nullptr,
                                    nullptr};
// Declares the flags of its review, and none of the modules.
const dicebench_str kDeclaredOther[] = {{"borderline", 10}};
const dicebench_suite_api kTableDeclaringOther = {sizeof(dicebench_suite_api),
                                                  &fake::open,
                                                  &fake::close,
                                                  &describe,
                                                  &fake::problem_count,
                                                  &fake::problem,
                                                  &fake::build_prompt,
                                                  &extract,
                                                  &review,
                                                  nullptr,
                                                  kDeclaredOther,
                                                  1,
                                                  nullptr,
                                                  nullptr,
                                                  nullptr,
                                                  nullptr};
const dicebench_suite_api kTableDeclaringUnknown = {sizeof(dicebench_suite_api),
                                                    &fake::open,
                                                    &fake::close,
                                                    &describe,
                                                    &fake::problem_count,
                                                    &fake::problem,
                                                    &fake::build_prompt,
                                                    &extract,
                                                    &review,
                                                    nullptr,
                                                    kDeclaredUnknown,
                                                    1,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr};
// A plugin built against ABI 1.2: its table ends after review, before the 1.3 fields (whatever memory lies after it).
const dicebench_suite_api kTable12 = {offsetof(dicebench_suite_api, optional_extract_problem),
                                      &fake::open,
                                      &fake::close,
                                      &describe,
                                      &fake::problem_count,
                                      &fake::problem,
                                      &fake::build_prompt,
                                      &extract,
                                      &review,
                                      nullptr,
                                      kDeclaredOther,
                                      1,
                                      &candidate_modules,
                                      nullptr,
                                      nullptr,
                                      nullptr};
// A plugin built against ABI 1.0: its table ends before review (whatever memory lies after it).
const dicebench_suite_api kTable10 = {offsetof(dicebench_suite_api, optional_review),
                                      &fake::open,
                                      &fake::close,
                                      &describe,
                                      &fake::problem_count,
                                      &fake::problem,
                                      &fake::build_prompt,
                                      &extract,
                                      &review,
                                      nullptr,
                                      nullptr,
                                      0,
                                      nullptr,
                                      nullptr,
                                      nullptr,
                                      nullptr};

}  // namespace

TEST_CASE("a suite's review findings arrive as evaluation flags") {
  const auto session = open_session(kTable);
  g_flag = "backend_unused";
  const auto found = session.review(0, "print(1)");
  REQUIRE_MESSAGE(found.ok(), found.error().message);
  REQUIRE(found->size() == 1);
  CHECK(found->front().first == EvaluationFlag::backend_unused);
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

TEST_CASE(
    "a review reporting a flag outside the vocabulary is an error naming the plugin, and a failing one its own line") {
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

TEST_CASE(
    "ABI 1.3: a suite declares its review's flags and its candidates' modules, and a 1.2 table behaves as before") {
  const auto session = open_session(kTable);
  REQUIRE(session.review_flags().has_value());
  CHECK(*session.review_flags() == std::vector{EvaluationFlag::backend_unused});
  const auto modules = session.candidate_modules();
  REQUIRE(modules.ok());
  CHECK(*modules == std::vector<std::string>{"tilelang"});  // from the call, not describe()'s "triton"

  const auto old = open_session(kTable12);
  CHECK_FALSE(old.review_flags().has_value());  // any flag of the vocabulary, as before 1.3
  g_flag = "backend_unused";
  const auto found = old.review(0, "x");
  REQUIRE(found.ok());
  CHECK(found->size() == 1);
  const auto old_modules = old.candidate_modules();
  REQUIRE(old_modules.ok());
  CHECK(*old_modules == std::vector<std::string>{"triton"});  // describe()'s, as 1.2 said them
}

TEST_CASE(
    "ABI 1.3: a review reporting a flag its suite did not declare fails, and declaring an unknown flag refuses the "
    "suite") {
  const auto session = open_session(kTableDeclaringOther);
  g_flag = "backend_unused";
  const auto undeclared = session.review(0, "x");
  REQUIRE_FALSE(undeclared.ok());
  CHECK(undeclared.error().message ==
        "/plugins/libdicebench-suite-test.so: review reported the flag 'backend_unused', which the suite does not "
        "declare");
  const auto none = session.candidate_modules();
  REQUIRE(none.ok());
  CHECK(none->empty());  // no call: its candidates import nothing else

  const auto refused = fake::try_open_session(kTableDeclaringUnknown);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "/plugins/libdicebench-suite-test.so: declares the review flag 'looks_fishy', which is not an evaluation flag");
}

TEST_CASE(
    "ABI 1.5: a problem given as its source is reviewed by the suite's optional_review_source, a 1.4 table has none") {
  dicebench_suite_api table15 = kTable;
  table15.optional_review_source = &review_source;
  auto session = open_session(table15);
  auto found = session.review_source("class Model: ...", "class ModelNew: ...");
  REQUIRE_MESSAGE(found.ok(), found.error().message);
  REQUIRE(found->size() == 1);
  CHECK((*found)[0].first == EvaluationFlag::backend_unused);
  CHECK((*found)[0].second == "problem of 16 bytes, candidate of 19");
  // The same table as a 1.4 plugin built it: the field is past its end, and never read.
  dicebench_suite_api table14 = table15;
  table14.struct_size = offsetof(dicebench_suite_api, optional_review_source);
  auto older = open_session(table14);
  auto none = older.review_source("class Model: ...", "class ModelNew: ...");
  REQUIRE(none.ok());
  CHECK(none->empty());
}
