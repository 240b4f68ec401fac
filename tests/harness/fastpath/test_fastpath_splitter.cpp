// Tests of the fast path's splitter: device part, host part, launch rewriting and the reasons to
// fall back, on the test candidates and on small sources aimed at one rule each.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "harness/fastpath/src/source_scanner.hpp"
#include "harness/fastpath/src/source_splitter.hpp"
#include "tests/harness/fastpath/candidate_files.hpp"

using namespace dicebench::fastpath;
using fastpath_test::load_candidates;

namespace {

long count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

bool has_token(const std::string& source, const std::string& text) {
  auto tokens = scan_source(source);
  REQUIRE(tokens.ok());
  for (const auto& t : tokens.value())
    if (t.kind != TokenKind::Preprocessor && token_text(source, t) == text) return true;
  return false;
}

SplitSource split_ok(const std::string& source) {
  auto result = split_cuda_source(source);
  INFO(source);
  REQUIRE_MESSAGE(result.ok(), (result.ok() ? "" : result.error().message));
  return result.value();
}

std::string split_error(const std::string& source) {
  auto result = split_cuda_source(source);
  REQUIRE_FALSE(result.ok());
  return result.error().message;
}

}  // namespace

TEST_CASE("every test candidate splits as expected, keeping its lines") {
  std::printf("\n%-22s %9s  %s\n", "candidate", "split ms", "launches rewritten");
  for (const auto& c : load_candidates()) {
    if (c.cuda_source.empty()) continue;
    CAPTURE(c.name);
    auto started = std::chrono::steady_clock::now();
    auto result = split_cuda_source(c.cuda_source);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (!c.expect_fast_path && c.reason_hint == "template") {
      REQUIRE_FALSE(result.ok());
      CHECK(result.error().message.find("template") != std::string::npos);
      std::printf("%-22s %9.3f  fallback: %s\n", c.name.c_str(), ms, result.error().message.c_str());
      continue;
    }
    REQUIRE_MESSAGE(result.ok(), (result.ok() ? "" : result.error().message));
    const SplitSource& s = result.value();
    CHECK(count_lines(s.device_source) == count_lines(c.cuda_source));
    CHECK(count_lines(s.host_source) == count_lines(c.cuda_source));
    CHECK_FALSE(s.kernels.empty());
    CHECK_FALSE(s.launches.empty());
    // No launch brackets are left in the host part, and no host API in the device part.
    CHECK_FALSE(has_token(s.host_source, "<<<"));
    CHECK(s.device_source.find("data_ptr") == std::string::npos);
    CHECK(s.device_source.find("torch::empty") == std::string::npos);
    // Kernel bodies are gone from the host part.
    CHECK_FALSE(has_token(s.host_source, "threadIdx"));
    CHECK(has_token(s.device_source, "threadIdx"));
    std::printf("%-22s %9.3f", c.name.c_str(), ms);
    for (const auto& launch : s.launches) std::printf("  line %d: %s...)", launch.line, launch.replacement.c_str());
    std::printf("\n");
  }
}

TEST_CASE("names of launched kernels: plain, qualified, extern \"C\", templates with type and value arguments") {
  auto candidates = load_candidates();
  auto find = [&](const std::string& name) {
    for (const auto& c : candidates)
      if (c.name == name) return c;
    FAIL("no candidate " << name);
    return candidates.front();
  };
  SplitSource t = split_ok(find("templated_kernel").cuda_source);
  CHECK(t.name_expressions == std::vector<std::string>{"scale_add_kernel<float, 4>", "scale_add_kernel<double, 2>"});
  CHECK(t.kernels.size() == 1);
  CHECK(t.kernels[0].is_template);
  SplitSource d = split_ok(find("dispatch_kernel").cuda_source);
  CHECK(d.name_expressions == std::vector<std::string>{"leaky_relu_kernel<double>", "leaky_relu_kernel<float>"});
  CHECK(d.host_source.find("::dbfp::slot_for<scalar_t, double, float>(0, 1)") != std::string::npos);
  SplitSource m = split_ok(find("macros_comments").cuda_source);
  CHECK(m.name_expressions == std::vector<std::string>{"fill_kernel", "fastpath_test::clamp_scale_kernel"});
  CHECK(m.host_source.find("::dbfp::launcher<decltype(&fastpath_test::clamp_scale_kernel)>") != std::string::npos);
  // Comments and strings with launch brackets stay as they were.
  CHECK(m.host_source.find("fake_kernel<<<1, 1>>>();") != std::string::npos);
  CHECK(m.host_source.find("\"launching clamp_scale_kernel<<<blocks, BLOCK_SIZE>>>\"") != std::string::npos);
  SplitSource s = split_ok(find("current_stream").cuda_source);
  CHECK(s.host_source.find("cudaFuncSetAttribute(::dbfp::kernel_ref(0), ") != std::string::npos);
  CHECK(s.host_source.find(
            "::dbfp::launcher<decltype(&scale_rows_kernel)>(::dbfp::kernel_slot(0), xc.size(0), 256, smem, stream)(") !=
        std::string::npos);
  SplitSource b = split_ok(find("cublas_gemm").cuda_source);
  CHECK(b.host_libraries == std::vector<std::string>{"cublas"});
  CHECK(b.device_source.find("cublas_v2.h") == std::string::npos);
}

TEST_CASE("host functions leave the device part and kernels become declarations in the host part") {
  std::string source =
      "#include <torch/extension.h>\n"
      "__global__ void k(float* x) {\n  x[threadIdx.x] = 1.f;\n}\n"
      "torch::Tensor f(torch::Tensor x) {\n  k<<<1, 32>>>(x.data_ptr<float>());\n  return x;\n}\n";
  SplitSource s = split_ok(source);
  CHECK(s.device_source.find("#include <torch/extension.h>") == std::string::npos);
  CHECK(s.device_source.find("torch::Tensor f") == std::string::npos);
  CHECK(s.device_source.find("x[threadIdx.x] = 1.f;") != std::string::npos);
  CHECK(s.host_source.find("__global__ void k(float* x) ;") != std::string::npos);
  CHECK(s.host_source.find("::dbfp::launcher<decltype(&k)>(::dbfp::kernel_slot(0), 1, 32)(x.data_ptr<float>());") !=
        std::string::npos);
  REQUIRE(s.launches.size() == 1);
  CHECK(s.launches[0].line == 6);
}

TEST_CASE("device helpers, device variables, constexpr functions and classes go where they belong") {
  std::string source =
      "#include <vector>\n"
      "#include <cub/block/block_reduce.cuh>\n"
      "constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }\n"
      "__constant__ float weights[16];\n"
      "static std::vector<int> host_cache;\n"
      "struct Op {\n  __device__ float operator()(float v) const { return __expf(v); }\n"
      "  int host_only() const { return 1; }\n};\n"
      "__device__ float helper(float v) { return v * 2; }\n"
      "__host__ __device__ inline float both(float v) { return v + 1; }\n"
      "__global__ void k(float* x) { x[0] = helper(both(weights[0])) + Op()(1.f) + ceil_div(3, 2); }\n"
      "void launch(float* x) { k<<<ceil_div(10, 4), 32>>>(x); }\n";
  SplitSource s = split_ok(source);
  // Device part: no <vector>, no host globals, no host member functions; constexpr made H/D.
  CHECK(s.device_source.find("#include <vector>") == std::string::npos);
  CHECK(s.device_source.find("host_cache") == std::string::npos);
  CHECK(s.device_source.find("host_only") == std::string::npos);
  CHECK(s.device_source.find("__host__ __device__ constexpr int ceil_div") != std::string::npos);
  CHECK(s.device_source.find("#include <cub/block/block_reduce.cuh>") != std::string::npos);
  CHECK(s.device_source.find("void launch") == std::string::npos);
  // Host part: no device-only headers, variables or functions; device member bodies gone.
  CHECK(s.host_source.find("cub/") == std::string::npos);
  CHECK(s.host_source.find("weights[16]") == std::string::npos);
  CHECK(s.host_source.find("helper(float v)") == std::string::npos);
  CHECK(s.host_source.find("__expf") == std::string::npos);
  CHECK(s.host_source.find("__device__ float operator()(float v) const ;") != std::string::npos);
  CHECK(s.host_source.find("inline float both(float v) { return v + 1; }") != std::string::npos);
  CHECK(s.host_source.find("constexpr int ceil_div") != std::string::npos);
  CHECK(s.host_source.find("static std::vector<int> host_cache;") != std::string::npos);
}

TEST_CASE("what the splitter refuses, and why") {
  CHECK(split_error("__global__ void k(float*);\nvoid f(float* x) { auto p = k; p<<<1, 1>>>(x); }\n")
            .find("not a __global__ function") != std::string::npos);
  CHECK(split_error("__global__ void child(float*) {}\n__global__ void parent(float* x) { child<<<1, 1>>>(x); }\n")
            .find("dynamic parallelism") != std::string::npos);
  CHECK(split_error("template <class T> __global__ void k(T*) {}\nvoid f(float* x) { k<<<1, 1>>>(x); }\n")
            .find("without explicit template arguments") != std::string::npos);
  CHECK(split_error("#define L(kern) kern<<<1, 1>>>()\nvoid f() {\n#if A\n  {\n#else\n  {\n#endif\n}\n").find("line") !=
        std::string::npos);
  std::string dispatch =
      "template <class T> __global__ void k(T*) {}\n"
      "void f(torch::Tensor x) { AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), \"f\", [&] {\n"
      "  k<scalar_t><<<1, 1>>>(x.data_ptr<scalar_t>()); }); }\n";
  CHECK(split_error(dispatch).find("AT_DISPATCH_FLOATING_TYPES_AND_HALF") != std::string::npos);
  CHECK(
      split_error("__global__ void k(float*) {}\n__global__ void k(double*) {}\nvoid f(float* x) { k<<<1,1>>>(x); }\n")
          .find("overloaded") != std::string::npos);
  // An explicit specialization is a second definition of the same kernel.
  CHECK(split_error("template <class T> __global__ void k(T*) {}\ntemplate <> __global__ void k<float>(float*) {}\n"
                    "void f(float* x) { k<float><<<1,1>>>(x); }\n")
            .find("overloaded") != std::string::npos);
}

TEST_CASE("a kernel declared before the host code and defined after it") {
  std::string source =
      "__global__ void late(float* data, int count);\n"
      "void f(float* x) { late<<<1, 32>>>(x, 4); }\n"
      "__global__ void late(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 0; }\n";
  SplitSource s = split_ok(source);
  REQUIRE(s.kernels.size() == 1);
  CHECK(s.name_expressions == std::vector<std::string>{"late"});
  CHECK(s.device_source.find("__global__ void late(float* data, int count);") != std::string::npos);
  CHECK(s.host_source.find("__global__ void late(float* x, int n) ;") != std::string::npos);
}

TEST_CASE("a launch whose configuration spans lines and holds calls keeps its lines") {
  std::string source =
      "__global__ void k(float* x, int n) {}\n"
      "void f(float* x, int n) {\n"
      "  k<<<dim3((n + 255) / 256, std::max(1, n / 1024)),\n"
      "      dim3(256), 0,\n"
      "      0>>>(x,\n"
      "           n);\n"
      "}\n";
  SplitSource s = split_ok(source);
  CHECK(count_lines(s.host_source) == count_lines(source));
  CHECK(s.host_source.find("::dbfp::launcher<decltype(&k)>(::dbfp::kernel_slot(0), dim3((n + 255) / 256, "
                           "std::max(1, n / 1024)),\n      dim3(256), 0,\n      0)(x,\n           n);") !=
        std::string::npos);
}

TEST_CASE("cpp_sources with only declarations are recognised") {
  CHECK(is_declarations_only("#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x);\n// note {\n"));
  CHECK_FALSE(is_declarations_only("torch::Tensor f(torch::Tensor x) { return x; }"));
}

TEST_CASE("header classes") {
  CHECK(classify_header("torch/extension.h") == HeaderUse::HostOnly);
  CHECK(classify_header("vector") == HeaderUse::HostOnly);
  CHECK(classify_header("cuda_runtime.h") == HeaderUse::DeviceAndHost);
  CHECK(classify_header("cuda_fp16.h") == HeaderUse::DeviceAndHost);
  CHECK(classify_header("cmath") == HeaderUse::DeviceAndHost);
  CHECK(classify_header("span") == HeaderUse::HostOnly);
  CHECK(classify_header("cuda/std/span") == HeaderUse::DeviceAndHost);
  CHECK(classify_header("cooperative_groups.h") == HeaderUse::DeviceOnly);
  CHECK(classify_header("mma.h") == HeaderUse::DeviceOnly);
  CHECK(classify_header("cub/cub.cuh") == HeaderUse::DeviceOnly);
}
