// The fast path's trusted compile step as the host runs it (harness/client/compile_service.hpp):
// one sandboxed dicebench-compile process per request, the cache written there and nowhere else,
// a request past its deadline killed and declined, a changed cache entry rebuilt, a malformed
// request declined. No GPU needed: the step compiles, it does not load.
#include "candidate_files.hpp"
#include "harness/client/compile_service.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace dicebench;
namespace fs = std::filesystem;

namespace {

harness::CompileService service_for(const std::string& cache) {
  harness::CompileService s;
  s.executable = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-compile";
  s.cache_dir = cache;
  s.sandbox.executable = std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-sandbox";
  s.sandbox.memory_max_bytes = 4ull << 30;
  // As the Evaluator sets it: the cache (which the compile step must still write) and the build's
  // own folders, which a checkout under /tmp would otherwise lose to the private /tmp.
  s.sandbox.read_only = harness::worker_runtime_paths(std::string(DICEBENCH_BUILD_DIR) + "/bin/dicebench-worker");
  s.sandbox.read_only.push_back(cache);
  return s;
}

nlohmann::json request_json(const fastpath_test::TestCandidate& c) {
  return {{"name", c.name},
          {"cpp_sources", {c.cpp_source}},
          {"cuda_sources", c.cuda_source.empty() ? nlohmann::json::array() : nlohmann::json::array({c.cuda_source})},
          {"functions", c.functions},
          {"extra_cflags", c.extra_cflags},
          {"extra_cuda_cflags", c.extra_cuda_cflags},
          {"extra_ldflags", c.extra_ldflags},
          {"arch", "sm_90"}};
}

auto later(int seconds) { return std::chrono::steady_clock::now() + std::chrono::seconds(seconds); }

}  // namespace

TEST_CASE("a sandboxed compile step fills the cache, a changed entry is rebuilt, a late one is killed") {
  fastpath_test::TempFolder tmp("dicebench-compile-service");
  const auto service = service_for(tmp.path());
  const auto candidate = fastpath_test::load_candidate(fastpath_test::candidates_dir() + "/elementwise_add.py");

  // A deadline the compile cannot meet: declined, and no compile process is left.
  const auto late = harness::compile_for_candidate(request_json(candidate), service,
                                                   std::chrono::steady_clock::now() + std::chrono::milliseconds(5));
  CHECK_FALSE(late.at("ok").get<bool>());
  CHECK(late.at("reason").get<std::string>().find("compile time limit") != std::string::npos);
  CHECK(late.contains("cache_hit"));  // every field the candidate's dicebench_fastpath reads

  const auto first = harness::compile_for_candidate(request_json(candidate), service, later(300));
  REQUIRE_MESSAGE(first.at("ok").get<bool>(), first.dump());
  CHECK_FALSE(first.at("cache_hit").get<bool>());
  const std::string entry = first.at("entry_dir");
  CHECK(entry.rfind(tmp.path(), 0) == 0);
  CHECK(fs::exists(entry + "/glue.so"));

  const auto second = harness::compile_for_candidate(request_json(candidate), service, later(60));
  CHECK(second.at("cache_hit").get<bool>());

  // A planted glue.so (the manifest's digest no longer matches) is never served: built again.
  { std::ofstream(entry + "/glue.so", std::ios::binary | std::ios::trunc) << "planted"; }
  const auto rebuilt = harness::compile_for_candidate(request_json(candidate), service, later(300));
  REQUIRE(rebuilt.at("ok").get<bool>());
  CHECK_FALSE(rebuilt.at("cache_hit").get<bool>());
  std::ifstream glue(rebuilt.at("entry_dir").get<std::string>() + "/glue.so", std::ios::binary);
  std::string head(7, '\0');
  glue.read(head.data(), 7);
  CHECK(head != "planted");

  const auto malformed = harness::compile_for_candidate({{"name", 3}}, service, later(60));
  CHECK_FALSE(malformed.at("ok").get<bool>());
  CHECK(malformed.at("reason").get<std::string>().find("malformed") != std::string::npos);
}
