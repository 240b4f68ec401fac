// SuiteSession::review across the C ABI: a 1.0 suite table (no review) finds nothing, a 1.1
// table's findings arrive as evaluation flags, a flag outside the host's vocabulary is the
// plugin's error, naming it, and a failing review is the plugin's own error line. The tables are built here, in-process, as a plugin would export them.
#include "core/host/host_services.hpp"
#include "core/host/suite_session.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

using namespace dicebench;

namespace {

const char* g_flag = "backend_unused";  // what the table's review reports

dicebench_status open(const dicebench_host_services*, dicebench_str, dicebench_suite** out, dicebench_error*) {
  static int handle = 0;
  *out = reinterpret_cast<dicebench_suite*>(&handle);
  return DICEBENCH_OK;
}
void close(dicebench_suite*) {}
dicebench_status describe(const dicebench_suite*, dicebench_text_sink sink, void* user, dicebench_error*) {
  sink(user, {"{}", 2});
  return DICEBENCH_OK;
}
size_t problem_count(const dicebench_suite*) { return 1; }
dicebench_status problem(const dicebench_suite*, size_t, dicebench_problem* out, dicebench_error*) {
  *out = {1, 1, {"Add", 3}, {"1_Add.py", 8}, {"", 0}, {"sha256:0", 8}};
  return DICEBENCH_OK;
}
dicebench_status build_prompt(const dicebench_suite*, size_t, dicebench_text_sink, void*, dicebench_error*) { return DICEBENCH_OK; }
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

const dicebench_suite_api kTable = {sizeof(dicebench_suite_api), &open, &close, &describe, &problem_count,
                                    &problem, &build_prompt, &extract, &review};
// A plugin built against ABI 1.0: its table ends before review (whatever memory lies after it).
const dicebench_suite_api kTable10 = {offsetof(dicebench_suite_api, optional_review), &open, &close, &describe, &problem_count,
                                      &problem, &build_prompt, &extract, &review};

host::SuiteSession open_session(const dicebench_suite_api& table) {
  host::LoadedPlugin plugin;
  plugin.info.path = "/plugins/libdicebench-suite-test.so";
  plugin.info.kind = DICEBENCH_KIND_SUITE;
  plugin.api = &table;
  static host::Config config;
  static host::HostServices services(config);
  auto session = host::SuiteSession::open(plugin, "test-suite", services);
  REQUIRE_MESSAGE(session.ok(), session.error().message);
  return std::move(*session);
}

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
