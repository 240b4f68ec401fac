// A suite plugin's C table built in-process for the SuiteSession tests: the calls every table needs
// (two problems, 1/1 and 1/2, named "P"), and a session opened on a table, as the host opens a
// loaded plugin's (try_open_session: the opening's error, for tests of a refused table). Each test adds the calls it is
// about (extract, review, ...).
#pragma once

#include "core/host/host_services.hpp"
#include "core/host/suite_session.hpp"

#include <doctest/doctest.h>

namespace dicebench::test::fake_suite {

inline dicebench_status open(const dicebench_host_services*, dicebench_str, dicebench_suite** out, dicebench_error*) {
  static int handle = 0;
  *out = reinterpret_cast<dicebench_suite*>(&handle);
  return DICEBENCH_OK;
}
inline void close(dicebench_suite*) {}
inline dicebench_status describe(const dicebench_suite*, dicebench_text_sink sink, void* user, dicebench_error*) {
  sink(user, {"{}", 2});
  return DICEBENCH_OK;
}
inline size_t problem_count(const dicebench_suite*) { return 2; }
inline dicebench_status problem(const dicebench_suite*, size_t index, dicebench_problem* out, dicebench_error*) {
  *out = {static_cast<int64_t>(index + 1), 1, {"P", 1}, {"p.py", 4}, {"", 0}, {"sha256:0", 8}};
  return DICEBENCH_OK;
}
inline dicebench_status build_prompt(const dicebench_suite*, size_t, dicebench_text_sink, void*, dicebench_error*) {
  return DICEBENCH_OK;
}

inline Result<host::SuiteSession> try_open_session(const dicebench_suite_api& table) {
  host::LoadedPlugin plugin;
  plugin.info.path = "/plugins/libdicebench-suite-test.so";
  plugin.info.kind = DICEBENCH_KIND_SUITE;
  plugin.api = &table;
  static host::Config config;
  static host::HostServices services(config);
  return host::SuiteSession::open(plugin, "test-suite", services);
}

inline host::SuiteSession open_session(const dicebench_suite_api& table) {
  auto session = try_open_session(table);
  REQUIRE_MESSAGE(session.ok(), session.error().message);
  return std::move(*session);
}

}  // namespace dicebench::test::fake_suite
