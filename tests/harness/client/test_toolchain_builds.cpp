// The toolchain pool (harness/client/toolchain_builds.hpp) with a stand-in toolchain worker
// (fake_toolchain_worker.py, no torch): outcomes cached by content, failures included, and never
// built twice; one build for concurrent requests of one call; at most `jobs` builds at once; a
// changed entry set aside and built again; a build past its limit timed out and not cached; an
// abandoned wait ended; a precompiled header made once plain flags recur, published read-only and
// offered to later builds, never for flags that may name a path.
#include "core/base/whole_file.hpp"
#include "harness/client/precompiled_header_calls.hpp"
#include "harness/client/toolchain_builds.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace dicebench;
using harness::ToolchainBuilds;
using harness::ToolchainOutcome;
namespace fs = std::filesystem;

namespace {

// A fresh cache and build log, and the stand-in's behaviour through its environment.
struct Fixture {
  fs::path root;
  fs::path log;
  Fixture(const char* outcome, double seconds) {
    std::string pattern = (fs::temp_directory_path() / "dicebench-toolchain-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()));
    root = pattern;
    log = root / "builds.log";
    setenv("FAKE_TOOLCHAIN_LOG", log.c_str(), 1);
    setenv("FAKE_TOOLCHAIN_OUTCOME", outcome, 1);
    setenv("FAKE_TOOLCHAIN_SECONDS", std::to_string(seconds).c_str(), 1);
    setenv("FAKE_TOOLCHAIN_PCH_LOG", (root / "headers.log").c_str(), 1);
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  harness::ToolchainBuildSettings settings(int jobs = 1) const {
    harness::ToolchainBuildSettings s;
    s.worker_executable = std::string(DICEBENCH_SOURCE_DIR) + "/tests/harness/client/fake_toolchain_worker.py";
    setenv("FAKE_TOOLCHAIN_SPEC_DIR", DICEBENCH_BUILD_DIR "/lib/dicebench/python", 1);
    s.cache_dir = (root / "cache").string();
    s.work_root = root.string();
    s.sandbox.mode = "off";
    s.jobs = jobs;
    s.timeout = std::chrono::seconds(30);
    return s;
  }
  int builds() const {
    std::ifstream in(log);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
  int headers_made() const {
    std::ifstream in(root / "headers.log");
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
};

nlohmann::json call(const std::string& name, const std::string& source = "int f();") {
  return {{"arguments", {{"name", name}, {"cpp_sources", source}, {"functions", {"f"}}}},
          {"environment", {{"TORCH_CUDA_ARCH_LIST", "9.0+PTX"}}}};
}

nlohmann::json with_flags(nlohmann::json call, const nlohmann::json& flags) {
  call["arguments"]["extra_cflags"] = flags;
  return call;
}

// Waits (up to 20 s) for the pool's count of headers made to reach `made`.
bool wait_for_headers(const ToolchainBuilds& builds, int64_t made) {
  for (int i = 0; i < 400 && builds.counts().headers_made < made; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return builds.counts().headers_made == made;
}

}  // namespace

TEST_CASE("a failed build is cached by content and never built twice") {
  Fixture fixture("fail", 0.2);
  {
    ToolchainBuilds builds(fixture.settings());
    const ToolchainOutcome first = builds.build(call("ext"), "job-1");
    CHECK(first.kind == ToolchainOutcome::Kind::failed);
    CHECK_FALSE(first.cache_hit);
    CHECK(first.message.find("Error building extension 'ext'") != std::string::npos);
    const ToolchainOutcome again = builds.build(call("ext"), "job-2");
    CHECK(again.kind == ToolchainOutcome::Kind::failed);
    CHECK(again.cache_hit);
    CHECK(again.message == first.message);
    CHECK(fixture.builds() == 1);
    CHECK(builds.build(call("ext", "int g();"), "job-3").kind == ToolchainOutcome::Kind::failed);  // other sources
    CHECK(fixture.builds() == 2);
    CHECK(builds.counts().cache_hits == 1);
    CHECK(builds.counts().failures == 2);
  }
  ToolchainBuilds later(fixture.settings());  // another run, the same cache
  CHECK(later.build(call("ext"), "job-4").cache_hit);
  CHECK(fixture.builds() == 2);
  // The order the build compiles in is not part of what it is: the outcome stands for that call.
  nlohmann::json ordered = call("ext");
  ordered["compile_first"] = "cuda_sources";
  CHECK(later.build(ordered, "job-5").cache_hit);
  CHECK(fixture.builds() == 2);
}

TEST_CASE("each build asks its worker for the pool's niceness") {
  for (const int niceness : {0, 10}) {
    Fixture fixture("fail", 0);
    auto settings = fixture.settings();
    settings.niceness = niceness;
    ToolchainBuilds builds(settings);
    CHECK(builds.build(call("ext"), "job-1").kind == ToolchainOutcome::Kind::failed);
    CHECK(read_whole_file(fixture.log.string() + ".niceness").value_or("") == std::to_string(niceness) + "\n");
  }
}

TEST_CASE("a successful build is published with its digest, and a changed entry is built again") {
  Fixture fixture("build", 0.0);
  ToolchainBuilds builds(fixture.settings());
  const ToolchainOutcome built = builds.build(call("mod"), "job-1");
  REQUIRE(built.kind == ToolchainOutcome::Kind::built);
  CHECK(built.module_name == "mod");
  const fs::path module = fs::path(built.entry_dir) / "mod.so";
  CHECK(fs::is_regular_file(module));
  CHECK(fs::path(built.entry_dir).parent_path().filename() == "entries");
  CHECK(builds.build(call("mod"), "job-2").cache_hit);
  CHECK(fixture.builds() == 1);
  fs::permissions(module, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(module, std::ios::app) << "planted";
  const ToolchainOutcome rebuilt = builds.build(call("mod"), "job-3");
  CHECK(rebuilt.kind == ToolchainOutcome::Kind::built);
  CHECK_FALSE(rebuilt.cache_hit);
  CHECK(fixture.builds() == 2);
  auto bytes = read_whole_file(fs::path(rebuilt.entry_dir) / "mod.so");
  REQUIRE(bytes.ok());
  CHECK(bytes->find("planted") == std::string::npos);
}

TEST_CASE("concurrent requests of one call build it once, and builds beyond `jobs` wait their turn") {
  Fixture fixture("fail", 1.0);
  ToolchainBuilds builds(fixture.settings(/*jobs=*/1));
  std::vector<ToolchainOutcome> outcomes(4);
  std::vector<std::thread> threads;
  const auto started = std::chrono::steady_clock::now();
  threads.emplace_back([&] { outcomes[0] = builds.build(call("same"), "a"); });
  threads.emplace_back([&] { outcomes[1] = builds.build(call("same"), "b"); });
  threads.emplace_back([&] { outcomes[2] = builds.build(call("other"), "c"); });
  threads.emplace_back([&] { outcomes[3] = builds.build(call("third"), "d"); });
  for (auto& thread : threads) thread.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(fixture.builds() == 3);  // "same" once
  for (const auto& outcome : outcomes) CHECK(outcome.kind == ToolchainOutcome::Kind::failed);
  CHECK(seconds >= 3.0);  // one at a time: three builds of a second each
  CHECK(builds.counts().running == 0);
  CHECK(builds.counts().waiting == 0);
}

TEST_CASE("a build past its limit is a timeout and is not cached, and an abandoned wait ends") {
  Fixture fixture("hang", 0.0);
  harness::ToolchainBuildSettings settings = fixture.settings();
  settings.timeout = std::chrono::seconds(3);
  ToolchainBuilds builds(settings);
  const ToolchainOutcome timed_out = builds.build(call("slow"), "job-1");
  CHECK(timed_out.kind == ToolchainOutcome::Kind::timed_out);
  CHECK(builds.counts().timeouts == 1);
  CHECK_FALSE(fs::exists(fs::path(settings.cache_dir) / "entries" / "slow"));

  // One build runs (it hangs); a second owner waits its turn, then gives up.
  ToolchainOutcome running, waiting;
  std::thread first([&] { running = builds.build(call("slow"), "job-2"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::thread second([&] { waiting = builds.build(call("other"), "job-3"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto abandoned = std::chrono::steady_clock::now();
  builds.abandon("job-3");
  second.join();
  CHECK(std::chrono::steady_clock::now() - abandoned < std::chrono::seconds(2));
  CHECK(waiting.kind == ToolchainOutcome::Kind::declined);
  builds.abandon("job-2");  // the build itself is killed: nobody else wants it
  first.join();
  CHECK(running.kind != ToolchainOutcome::Kind::built);
  CHECK(fixture.builds() == 2);  // "other" never started
}

TEST_CASE("a built module larger than the cache takes is declined, not cached") {
  Fixture fixture("build", 0.0);
  setenv("FAKE_TOOLCHAIN_MODULE_BYTES", std::to_string(600ll << 20).c_str(), 1);  // sparse: no disk used
  ToolchainBuilds builds(fixture.settings());
  const ToolchainOutcome huge = builds.build(call("huge"), "job-1");
  unsetenv("FAKE_TOOLCHAIN_MODULE_BYTES");
  CHECK(huge.kind == ToolchainOutcome::Kind::declined);
  CHECK(huge.message.find("over the") != std::string::npos);
  CHECK_FALSE(builds.build(call("huge"), "job-2").cache_hit);  // built again: nothing was stored
  CHECK(fixture.builds() == 2);
}

TEST_CASE("a precompiled header is made once plain flags recur, published read-only and offered to later builds") {
  Fixture fixture("build", 0.0);
  const auto o3 = nlohmann::json::array({"-O3"});
  {
    ToolchainBuilds builds(fixture.settings());
    CHECK_FALSE(builds.build(with_flags(call("a", "int a();"), o3), "job-1").with_header);
    CHECK(fixture.headers_made() == 0);  // flags seen once: no header yet
    (void)builds.build(with_flags(call("b", "int b();"), o3), "job-2");
    REQUIRE(wait_for_headers(builds, 1));
    const ToolchainOutcome third = builds.build(with_flags(call("c", "int c();"), o3), "job-3");
    CHECK(third.kind == ToolchainOutcome::Kind::built);
    CHECK(third.with_header);
    CHECK(builds.counts().builds_with_header >= 1);
    // Made by a worker of its own, from flags only: no source of any candidate.
    auto made = read_whole_file(fixture.root / "headers.log");
    REQUIRE(made.ok());
    const auto header_call = nlohmann::json::parse(made->substr(0, made->find('\n')));
    CHECK(header_call["arguments"] ==
          nlohmann::json{{"name", "dicebench_pch"}, {"cpp_sources", ""}, {"extra_cflags", o3}, {"with_cuda", false}});
    // Published under pch/<toolchain>/<key>/ beside the plain header, neither writable.
    int published = 0;
    for (const auto& entry : fs::recursive_directory_iterator(fixture.root / "cache" / "pch")) {
      if (entry.path().filename() != "torch_extension.h.gch") continue;
      ++published;
      CHECK((fs::status(entry.path()).permissions() & fs::perms::all &
             ~(fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read)) == fs::perms::none);
      auto plain = read_whole_file(entry.path().parent_path() / "torch_extension.h");
      REQUIRE(plain.ok());
      CHECK(*plain == "#include <torch/extension.h>\n");
    }
    CHECK(published == 1);
    // Flags that may name a path never make one, however often they recur.
    const auto include = nlohmann::json::array({"-O3", "-I/somewhere"});
    for (int i = 0; i < 3; ++i)
      CHECK_FALSE(builds.build(with_flags(call("i" + std::to_string(i), "int i();"), include), "job-i").with_header);
    auto cxx = call("cxx", "int x();");
    cxx["environment"]["CXX"] = "/home/someone/cc";
    (void)builds.build(cxx, "job-x1");
    cxx["arguments"]["cpp_sources"] = "int y();";
    (void)builds.build(cxx, "job-x2");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK(builds.counts().headers_made == 1);
    CHECK(fixture.headers_made() == 1);
  }
  // A later host over the same cache uses the header and makes none.
  ToolchainBuilds again(fixture.settings());
  (void)again.build(with_flags(call("d", "int d();"), o3), "job-4");
  CHECK(again.build(with_flags(call("e", "int e();"), o3), "job-5").with_header);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(fixture.headers_made() == 1);
  // Off: nothing offered.
  harness::ToolchainBuildSettings off = fixture.settings();
  off.precompiled_headers = false;
  ToolchainBuilds without(off);
  CHECK_FALSE(without.build(with_flags(call("f", "int f2();"), o3), "job-6").with_header);
}

TEST_CASE("no more than four headers are made for one toolchain, however many flag sets recur") {
  Fixture fixture("build", 0.0);
  ToolchainBuilds builds(fixture.settings());
  for (int set = 0; set < 6; ++set) {
    const auto flags = nlohmann::json::array({"-DVARIANT_" + std::to_string(set)});
    for (int ask = 0; ask < 2; ++ask) {
      const std::string name = "v" + std::to_string(set) + "_" + std::to_string(ask);
      (void)builds.build(with_flags(call(name, "int " + name + "();"), flags), "job-" + name);
    }
    REQUIRE(wait_for_headers(builds, std::min(set + 1, 4)));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(builds.counts().headers_made == 4);
  CHECK(fixture.headers_made() == 4);
}

TEST_CASE("only calls whose flags name no file and whose main.cpp begins with torch/extension.h make headers") {
  const auto made = [](nlohmann::json arguments, nlohmann::json environment = nlohmann::json::object()) {
    arguments["name"] = "ext";
    arguments["cpp_sources"] = "int f();";
    return harness::header_call_for({{"arguments", arguments}, {"environment", environment}});
  };
  for (const char* flag : {"-O3", "-O0", "-std=c++17", "-DNDEBUG", "-DBLOCK=256", "-Wall", "-ffast-math", "-g"})
    CHECK(made({{"extra_cflags", {flag}}}).has_value());
  for (const char* flag : {"-I/tmp/x", "-include", "/tmp/x.h", "-Wl,-rpath,/x", "-DPATH=/etc", "--sysroot=/",
                           "-wrapper", "@/tmp/flags", "-B/tmp", "-specs=/tmp/s"})
    CHECK_FALSE(made({{"extra_cflags", {"-O3", flag}}}).has_value());
  CHECK_FALSE(made({{"extra_cflags", "-O3"}}).has_value());  // a string, not a list
  CHECK_FALSE(made({{"extra_include_paths", {"/usr/include"}}}).has_value());
  CHECK_FALSE(made({{"no_implicit_headers", true}}).has_value());
  CHECK_FALSE(made({{"use_pch", true}}).has_value());
  unsetenv("NVCC_CCBIN");
  CHECK_FALSE(made({}, {{"NVCC_CCBIN", "/opt/gcc/bin/g++"}}).has_value());
  setenv("CUDA_HOME", "/usr/local/cuda", 1);  // the host's own CUDA is taken, another is not
  CHECK(made({}, {{"CUDA_HOME", "/usr/local/cuda"}})->at("environment") ==
        nlohmann::json{{"CUDA_HOME", "/usr/local/cuda"}});
  CHECK_FALSE(made({}, {{"CUDA_HOME", "/home/someone/cuda"}}).has_value());
  const auto cuda = made({{"cuda_sources", "__global__ void k() {}"}, {"with_cuda", nullptr}},
                         {{"TORCH_CUDA_ARCH_LIST", "9.0+PTX"}, {"CXX", nullptr}, {"TORCH_NVCC_FLAGS", "-O3"}});
  REQUIRE(cuda.has_value());
  CHECK((*cuda)["arguments"]["with_cuda"] == true);
  CHECK((*cuda)["environment"] == nlohmann::json{{"TORCH_CUDA_ARCH_LIST", "9.0+PTX"}});
  CHECK(made({{"extra_cflags", nullptr}})->at("arguments").at("extra_cflags") == nlohmann::json::array());
}
