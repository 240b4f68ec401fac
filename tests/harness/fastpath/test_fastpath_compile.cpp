// Tests of the fast path's compilers and cache, with no GPU: NVRTC compiles each test candidate's
// device part to an sm_90 cubin, g++ compiles each host glue against the shim, the whole path
// stores one cache entry per key (also when two processes compile the same source at once), and
// deterministic failures are cached as reasons. Prints the time of each stage.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "harness/fastpath/src/compile_flags.hpp"
#include "harness/fastpath/src/fastpath_compiler.hpp"
#include "harness/fastpath/src/glue_compiler.hpp"
#include "harness/fastpath/src/nvrtc_compiler.hpp"
#include "harness/fastpath/src/source_splitter.hpp"
#include "tests/harness/fastpath/candidate_files.hpp"

using namespace dicebench::fastpath;
using namespace fastpath_test;
namespace fs = std::filesystem;

namespace {

bool is_elf(const std::string& bytes) {
  return bytes.size() > 4 && bytes.compare(0, 4,
                                           "\x7f"
                                           "ELF") == 0;
}

std::size_t folder_entries(const std::string& path) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(path, ec); !ec && it != fs::directory_iterator(); ++it) ++n;
  return n;
}

}  // namespace

TEST_CASE("NVRTC compiles every candidate's device part to an sm_90 cubin and names its kernels") {
  TempFolder tmp("dbfp-nvrtc");
  Toolchain toolchain = default_toolchain(tmp.path());
  std::printf("\nNVRTC %s, sm_90\n%-22s %10s %10s  %s\n", nvrtc_version().c_str(), "candidate", "nvrtc s", "cubin B",
              "kernels");
  for (const auto& c : load_candidates()) {
    if (c.cuda_source.empty() || c.reason_hint == "template") continue;
    CAPTURE(c.name);
    auto split = split_cuda_source(c.cuda_source);
    REQUIRE(split.ok());
    auto flags = map_compile_flags(c.extra_cflags, c.extra_cuda_cflags, c.extra_ldflags, "sm_90");
    REQUIRE(flags.ok());
    auto binary = compile_device_part(split->device_source, split->name_expressions, flags.value(), toolchain.device);
    REQUIRE_MESSAGE(binary.ok(), (binary.ok() ? "" : binary.error().message));
    CHECK(is_elf(binary->cubin));
    REQUIRE(binary->lowered_names.size() == split->name_expressions.size());
    std::string names;
    for (const auto& [expr, lowered] : binary->lowered_names) {
      CHECK_FALSE(lowered.empty());
      names += expr + " -> " + lowered + "  ";
    }
    std::printf("%-22s %10.3f %10zu  %s\n", c.name.c_str(), binary->seconds, binary->cubin.size(), names.c_str());
  }
}

TEST_CASE("NVRTC errors are reasons that quote the compiler") {
  TempFolder tmp("dbfp-nvrtc-error");
  Toolchain toolchain = default_toolchain(tmp.path());
  CompileFlags flags;
  flags.arch = "sm_90";
  auto binary =
      compile_device_part("__global__ void k(float* x) { x[0] = undefined_thing; }\n", {"k"}, flags, toolchain.device);
  REQUIRE_FALSE(binary.ok());
  CHECK(binary.error().message.find("undefined_thing") != std::string::npos);
  CHECK(binary.error().message.find("cuda.cu(1)") != std::string::npos);
}

TEST_CASE("the device prelude gives what torch/extension.h gives nvcc code") {
  TempFolder tmp("dbfp-prelude");
  Toolchain toolchain = default_toolchain(tmp.path());
  CompileFlags flags;
  flags.arch = "sm_90";
  std::string source =
      "#include <cmath>\n#include <cfloat>\n#include <algorithm>\n"
      "constexpr float kNegInf = -INFINITY;\n"
      "template <typename T> __global__ void k(T* x, int64_t n) {\n"
      "  static_assert(std::is_same<T, float>::value, \"float\");\n"
      "  T v = std::max(x[0], std::numeric_limits<T>::lowest()) + FLT_MAX * 0 + (T)M_PI + std::sqrt(x[1]);\n"
      "  __half h = __float2half(v); __nv_bfloat16 b = __float2bfloat16(v);\n"
      "  x[2] = v + kNegInf + __half2float(h) + __bfloat162float(b) + (T)INT_MAX + (T)(uint32_t)n;\n"
      "  assert(n > 0);\n}\n";
  auto binary = compile_device_part(source, {"k<float>"}, flags, toolchain.device);
  REQUIRE_MESSAGE(binary.ok(), (binary.ok() ? "" : binary.error().message));
  // torch's nvcc defines stay in force: no __half operators.
  auto no_ops =
      compile_device_part("__global__ void k(__half* x) { x[0] = x[0] + x[1]; }\n", {"k"}, flags, toolchain.device);
  CHECK_FALSE(no_ops.ok());
}

TEST_CASE("g++ compiles every candidate's host glue against the shim") {
  TempFolder tmp("dbfp-glue");
  Toolchain toolchain = default_toolchain(tmp.path());
  std::string key = toolchain_fingerprint(toolchain).substr(0, 24);
  auto pch_started = std::chrono::steady_clock::now();
  GlueInput without_flags;  // g++'s default level, as most candidates' glue compiles
  without_flags.has_cuda = true;
  PreludeFolders default_preludes = ensure_precompiled_preludes(toolchain.glue, key, without_flags);
  double pch_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - pch_started).count();
  CHECK_FALSE(default_preludes.cpp.empty());
  CHECK(default_preludes.cuda == default_preludes.cpp);
  std::printf("\n%s; precompiled preludes (-O0) built once in %.2f s\n%-22s %8s %8s %8s %8s  %s\n",
              compiler_version("g++").c_str(), pch_seconds, "candidate", "cpp s", "cuda s", "link s", "wall s", "pch");
  for (const auto& c : load_candidates()) {
    if (c.reason_hint == "template") continue;
    CAPTURE(c.name);
    GlueInput input;
    input.cpp_source = c.cpp_source;
    input.functions = c.functions;
    auto flags = map_compile_flags(c.extra_cflags, c.extra_cuda_cflags, c.extra_ldflags, "sm_90");
    REQUIRE(flags.ok());
    input.flags = flags.value();
    if (!c.cuda_source.empty()) {
      auto split = split_cuda_source(c.cuda_source);
      REQUIRE(split.ok());
      input.has_cuda = true;
      input.cuda_host_source = split->host_source;
      input.name_expressions = split->name_expressions;
      input.host_libraries = split->host_libraries;
    }
    std::string work = tmp.path() + "/" + c.name;
    fs::create_directories(work);
    bool deterministic = false;
    PreludeFolders preludes = ensure_precompiled_preludes(toolchain.glue, key, input);
    auto build = build_glue(input, toolchain.glue, preludes, work, work + "/glue.so", &deterministic);
    if (!c.expect_fast_path) {
      REQUIRE_FALSE(build.ok());
      CHECK(deterministic);
      CHECK(build.error().message.find("g++") != std::string::npos);
      std::printf("%-22s fallback: %s\n", c.name.c_str(), build.error().message.substr(0, 160).c_str());
      continue;
    }
    REQUIRE_MESSAGE(build.ok(), (build.ok() ? "" : build.error().message));
    CHECK(fs::exists(work + "/glue.so"));
    std::printf("%-22s %8.3f %8.3f %8.3f %8.3f  %s\n", c.name.c_str(), build->cpp_seconds, build->cuda_seconds,
                build->link_seconds, build->seconds, build->used_pch ? "yes" : "no");
    // Compile speed is measured by the GPU benchmark (tools/perf/evaluation_benchmark.py),
    // not asserted here: a loaded 2-core CI machine is no measure of it.
    if (build->seconds > 1.0) MESSAGE("glue of " << c.name << " took " << build->seconds << " s (over 1 s)");
  }
}

TEST_CASE("the whole path: a miss compiles and stores, a hit reads back, timings per stage") {
  TempFolder tmp("dbfp-path");
  Toolchain toolchain = default_toolchain(tmp.path());
  {
    // The first compile with a fresh cache also builds the precompiled preludes.
    CompileRequest warm = request_for(load_candidate(candidates_dir() + "/elementwise_add.py"));
    warm.cpp_sources[0] += "\n// warm-up";
    CompileOutcome first = compile_with_fast_path(warm, toolchain);
    CHECK(first.ok);
    std::printf("\nfirst compile with an empty cache (builds the precompiled preludes): %.2f s\n", first.total_seconds);
  }
  std::printf("\n%-22s %8s %8s %8s %8s %8s  %s\n", "candidate", "split s", "nvrtc s", "g++ s", "total s", "hit s",
              "path");
  for (const auto& c : load_candidates()) {
    CAPTURE(c.name);
    CompileRequest request = request_for(c);
    CompileOutcome miss = compile_with_fast_path(request, toolchain);
    CHECK_FALSE(miss.cache_hit);
    CHECK(miss.ok == c.expect_fast_path);
    if (!c.expect_fast_path) CHECK(miss.reason.find(c.reason_hint) != std::string::npos);
    CompileOutcome hit = compile_with_fast_path(request, toolchain);
    CHECK(hit.cache_hit);
    CHECK(hit.ok == miss.ok);
    CHECK(hit.reason == miss.reason);
    CHECK(hit.kernels == miss.kernels);
    CHECK(hit.key == miss.key);
    if (miss.ok) {
      CHECK(fs::exists(hit.entry_dir + "/glue.so"));
      CHECK(fs::exists(hit.entry_dir + "/kernels.cubin") == !c.cuda_source.empty());
    }
    std::printf("%-22s %8.4f %8.3f %8.3f %8.3f %8.4f  %s\n", c.name.c_str(), miss.split_seconds, miss.nvrtc_seconds,
                miss.gxx_seconds, miss.total_seconds, hit.total_seconds,
                miss.ok ? "nvrtc" : ("fallback: " + miss.reason.substr(0, 90)).c_str());
  }
  // Nothing is left in the scratch folder.
  CHECK(folder_entries(tmp.path() + "/tmp") == 0);
}

TEST_CASE("cache keys change with sources, functions, flags and architecture, not with the module name") {
  auto c = load_candidate(candidates_dir() + "/elementwise_add.py");
  CompileRequest base = request_for(c);
  std::string fp = "fingerprint";
  std::string key = cache_key(base, fp);
  CompileRequest renamed = base;
  renamed.name = "another_name";
  CHECK(cache_key(renamed, fp) == key);
  CompileRequest edited = base;
  edited.cuda_sources[0] += " ";
  CHECK(cache_key(edited, fp) != key);
  CompileRequest flags = base;
  flags.extra_cuda_cflags = {"--use_fast_math"};
  CHECK(cache_key(flags, fp) != key);
  CompileRequest arch = base;
  arch.arch = "sm_90a";
  CHECK(cache_key(arch, fp) != key);
  CHECK(cache_key(base, "other toolchain") != key);
  // Moving text between list entries is a different request.
  CompileRequest split = base;
  split.cpp_sources = {c.cpp_source.substr(0, 10), c.cpp_source.substr(10)};
  CHECK(cache_key(split, fp) != key);
}

TEST_CASE("two processes compiling the same source at once end with one valid entry") {
  TempFolder tmp("dbfp-race");
  Toolchain toolchain = default_toolchain(tmp.path());
  auto c = load_candidate(candidates_dir() + "/two_kernels.py");
  CompileRequest request = request_for(c);
  std::fflush(stdout);
  pid_t children[2];
  for (pid_t& child : children) {
    child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      CompileOutcome o = compile_with_fast_path(request, toolchain);
      _exit(o.ok ? (o.cache_hit ? 10 : 11) : 1);
    }
  }
  int hits = 0, misses = 0;
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    int code = WEXITSTATUS(status);
    CHECK((code == 10 || code == 11));
    hits += code == 10;
    misses += code == 11;
  }
  // One compiled, the other waited for it and read the entry.
  CHECK(misses == 1);
  CHECK(hits == 1);
  CHECK(folder_entries(tmp.path() + "/entries") == 1);
  CHECK(folder_entries(tmp.path() + "/tmp") == 0);
  CompileOutcome after = compile_with_fast_path(request, toolchain);
  CHECK(after.ok);
  CHECK(after.cache_hit);
  auto entry = read_cache_entry(after.entry_dir);
  REQUIRE(entry.ok());
  CHECK(entry->kernels.size() == 2);
  CHECK(fs::file_size(after.entry_dir + "/kernels.cubin") > 0);
  CHECK(fs::file_size(after.entry_dir + "/glue.so") > 0);
}

TEST_CASE("transient failures are not cached and load_inline without functions is a reason") {
  TempFolder tmp("dbfp-transient");
  Toolchain toolchain = default_toolchain(tmp.path());
  toolchain.glue.cxx = "/nonexistent/g++";
  auto c = load_candidate(candidates_dir() + "/elementwise_add.py");
  CompileOutcome broken = compile_with_fast_path(request_for(c), toolchain);
  CHECK_FALSE(broken.ok);
  CHECK(folder_entries(tmp.path() + "/entries") == 0);
  Toolchain good = default_toolchain(tmp.path());
  CompileRequest no_functions = request_for(c);
  no_functions.functions.clear();
  CompileOutcome o = compile_with_fast_path(no_functions, good);
  CHECK_FALSE(o.ok);
  CHECK(o.reason.find("functions") != std::string::npos);
}
