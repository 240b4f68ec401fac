// Tests of the fast path's mapping of load_inline's compiler and linker flags.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/fastpath/src/compile_flags.hpp"

using namespace dicebench::fastpath;

namespace {
bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}
}  // namespace

TEST_CASE("the flags KernelBench candidates pass map onto NVRTC and g++") {
  auto f = map_compile_flags({"-O3", ""},
                             {"-O3", "--use_fast_math", "-lineinfo", "-Xptxas -v", "-maxrregcount=64",
                              "--expt-relaxed-constexpr", "-DBLOCK=128", "-std=c++17"},
                             {"-lcublas", ""}, "sm_90");
  REQUIRE(f.ok());
  CHECK(f->arch == "sm_90");
  CHECK(has(f->nvrtc_options, "--use_fast_math"));
  CHECK(has(f->nvrtc_options, "--generate-line-info"));
  CHECK(has(f->nvrtc_options, "--ptxas-options=-v"));
  CHECK(has(f->nvrtc_options, "--maxrregcount=64"));
  CHECK(has(f->nvrtc_options, "-DBLOCK=128"));
  CHECK(has(f->cuda_host_flags, "-DBLOCK=128"));
  CHECK(has(f->link_flags, "-lcublas"));
  CHECK(host_optimization(f->cpp_host_flags) == "-O3");
  CHECK(host_optimization(f->cuda_host_flags) == "-O3");
}

TEST_CASE("the glue compiles at the optimization level torch's build compiles the same source at") {
  auto cuda_level = [](std::vector<std::string> cuda_cflags) {
    auto f = map_compile_flags({}, cuda_cflags, {}, "sm_90");
    REQUIRE(f.ok());
    return host_optimization(f->cuda_host_flags);
  };
  // g++ and nvcc's host compiler without -O: -O0.
  auto none = map_compile_flags({}, {}, {}, "sm_90");
  REQUIRE(none.ok());
  CHECK(host_optimization(none->cpp_host_flags) == "-O0");
  CHECK(host_optimization(none->cuda_host_flags) == "-O0");
  // extra_cflags reach only the cpp_sources unit, extra_cuda_cflags only the cuda_sources one.
  auto cpp_only = map_compile_flags({"-O2", "-Os"}, {}, {}, "sm_90");
  REQUIRE(cpp_only.ok());
  CHECK(host_optimization(cpp_only->cpp_host_flags) == "-Os");
  CHECK(host_optimization(cpp_only->cuda_host_flags) == "-O0");
  CHECK(cuda_level({"-O2"}) == "-O2");
  CHECK(cuda_level({"-O0"}) == "-O0");
  // nvcc passes its own -O<n> after -Xcompiler's, and none for -O0.
  CHECK(cuda_level({"-O3", "-Xcompiler", "-O1"}) == "-O3");
  CHECK(cuda_level({"-Xcompiler", "-O1", "-O3"}) == "-O3");
  CHECK(cuda_level({"-Xcompiler", "-O2", "-O0"}) == "-O2");
  CHECK(cuda_level({"-Xcompiler=-Ofast"}) == "-Ofast");
  // What the compilers would refuse is a reason to fall back (torch's build gives the verdict).
  CHECK_FALSE(map_compile_flags({"-Oz3"}, {}, {}, "sm_90").ok());
  CHECK_FALSE(map_compile_flags({}, {"-O"}, {}, "sm_90").ok());
  CHECK_FALSE(map_compile_flags({}, {"-Ofast"}, {}, "sm_90").ok());
}

TEST_CASE("architecture flags: the GPU's own are fine, another is a reason to fall back") {
  CHECK(map_compile_flags({}, {"-arch=sm_90"}, {}, "sm_90").ok());
  CHECK(map_compile_flags({}, {"-gencode=arch=compute_90,code=sm_90"}, {}, "sm_90").ok());
  CHECK(map_compile_flags({}, {"-gencode", "arch=compute_90,code=[sm_90,compute_90]"}, {}, "sm_90").ok());
  auto a = map_compile_flags({}, {"-arch=sm_90a"}, {}, "sm_90");
  REQUIRE(a.ok());
  CHECK(a->arch == "sm_90a");
  auto other = map_compile_flags({}, {"-arch=sm_80"}, {}, "sm_90");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message.find("sm_80") != std::string::npos);
}

TEST_CASE("flags the fast path cannot honour are reasons") {
  CHECK(map_compile_flags({}, {"-rdc=true"}, {}, "sm_90").error().message.find("relocatable") != std::string::npos);
  CHECK(map_compile_flags({}, {"--some-new-flag"}, {}, "sm_90").error().message.find("--some-new-flag") !=
        std::string::npos);
  CHECK(map_compile_flags({}, {}, {"-lmylib"}, "sm_90").error().message.find("-lmylib") != std::string::npos);
  CHECK(map_compile_flags({"-fsanitize=address"}, {}, {}, "sm_90").error().message.find("-fsanitize") !=
        std::string::npos);
  CHECK_FALSE(map_compile_flags({}, {}, {}, "gfx90a").ok());
}

TEST_CASE("host flags: -std, -fopenmp and -Xcompiler") {
  auto f = map_compile_flags({"-std=c++20", "-fopenmp"}, {"-Xcompiler", "-fopenmp,-O2", "--std=c++20"}, {}, "sm_90");
  REQUIRE(f.ok());
  CHECK(f->cpp_std == "c++20");
  CHECK(f->cuda_std == "c++20");
  CHECK(has(f->cpp_host_flags, "-fopenmp"));
  CHECK(has(f->cuda_host_flags, "-fopenmp"));
  CHECK(has(f->link_flags, "-fopenmp"));
  CHECK(host_optimization(f->cuda_host_flags) == "-O2");
}

TEST_CASE("flag list entries split on spaces and keep quoted words") {
  CHECK(split_flag_words({"-Xptxas -O3", "", "  -DNAME='a b'  "}) ==
        std::vector<std::string>{"-Xptxas", "-O3", "-DNAME=a b"});
}
