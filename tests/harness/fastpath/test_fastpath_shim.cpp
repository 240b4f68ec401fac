// Tests of what the shim declares beyond torch/extension.h, with no GPU: nvcc's host min/max (the
// cuda_sources glue gets the same overloads as nvcc gives host code, results, result types and
// ambiguities alike, and the cpp_sources glue gets none), and the headers for torch's caching
// allocator, cuDNN, torch::tensor and the TORCH_CHECK_<op> checks: each compiles where torch's
// header would, links what it uses, and is declared only where torch declares it, so what torch's
// build rejects the fast path rejects too (and falls back to torch's build).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/fastpath/src/compile_flags.hpp"
#include "harness/fastpath/src/fastpath_compiler.hpp"
#include "harness/fastpath/src/glue_compiler.hpp"
#include "harness/fastpath/src/source_splitter.hpp"
#include "harness/fastpath/src/subprocess.hpp"
#include "tests/harness/fastpath/candidate_files.hpp"

using namespace dicebench::fastpath;
using namespace fastpath_test;
namespace fs = std::filesystem;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

struct Built {
  bool ok = false;
  std::string message;
  std::vector<std::string> host_libraries;
};

// Builds a glue whose cuda_sources are `cuda` (host part as the splitter leaves it) and whose
// cpp_sources are `cpp`, binding `function`.
class GlueBuilder {
 public:
  explicit GlueBuilder(const std::string& stem) : tmp_(stem), toolchain_(default_toolchain(tmp_.path())) {
    key_ = toolchain_fingerprint(toolchain_).substr(0, 24);
  }
  const Toolchain& toolchain() const { return toolchain_; }
  const std::string& folder() const { return tmp_.path(); }

  Built build(const std::string& cpp, const std::string& cuda, const std::string& function) {
    GlueInput input;
    input.cpp_source = cpp;
    input.functions = {function};
    auto flags = map_compile_flags({}, {}, {}, "sm_90");
    REQUIRE(flags.ok());
    input.flags = flags.value();
    if (!cuda.empty()) {
      auto split = split_cuda_source(cuda);
      REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.error().message));
      input.has_cuda = true;
      input.cuda_host_source = split->host_source;
      input.name_expressions = split->name_expressions;
      input.host_libraries = split->host_libraries;
    }
    std::string work = tmp_.path() + "/glue" + std::to_string(count_++);
    fs::create_directories(work);
    bool deterministic = false;
    PreludeFolders preludes = ensure_precompiled_preludes(toolchain_.glue, key_, input);
    auto built = build_glue(input, toolchain_.glue, preludes, work, work + "/glue.so", &deterministic);
    Built out;
    out.ok = built.ok();
    out.message = built.ok() ? "" : built.error().message;
    out.host_libraries = input.host_libraries;
    return out;
  }

 private:
  TempFolder tmp_;
  Toolchain toolchain_;
  std::string key_;
  int count_ = 0;
};

// A cuda_sources host function `f` with `body`, after `includes`.
std::string cuda_unit(const std::string& includes, const std::string& body) {
  return includes + "\n__global__ void k() {}\nvoid f() {\n" + body + "\n  k<<<1, 1>>>();\n}\n";
}

std::string nvcc_path(const Toolchain& toolchain) {
  fs::path nvcc = fs::path(toolchain.glue.cuda_include_dir).parent_path() / "bin" / "nvcc";
  return fs::exists(nvcc) ? nvcc.string() : "";
}

// Host code that calls min and max unqualified on pairs of every kind, printing each result's
// type and value.
const char* const kMinMaxProbe = R"(#include <cmath>
#include <cstdio>
template <class T> struct type_name { static constexpr const char* text = "other"; };
template <> struct type_name<int> { static constexpr const char* text = "int"; };
template <> struct type_name<unsigned> { static constexpr const char* text = "unsigned"; };
template <> struct type_name<long> { static constexpr const char* text = "long"; };
template <> struct type_name<unsigned long> { static constexpr const char* text = "unsigned long"; };
template <> struct type_name<long long> { static constexpr const char* text = "long long"; };
template <> struct type_name<unsigned long long> { static constexpr const char* text = "unsigned long long"; };
template <> struct type_name<float> { static constexpr const char* text = "float"; };
template <> struct type_name<double> { static constexpr const char* text = "double"; };
#define PROBE(expr)                                                                                 \
  do {                                                                                              \
    auto r = (expr);                                                                                \
    std::printf("%-24s %-18s %.17g %d\n", #expr, type_name<decltype(r)>::text, static_cast<double>(r), \
                std::signbit(static_cast<double>(r)) ? 1 : 0);                                      \
  } while (0)
int main() {
  short s = -4; char c = 'b'; bool t = true;
  PROBE(min(1, 2)); PROBE(max(1, 2)); PROBE(min(-7, -9)); PROBE(max(s, c)); PROBE(min(t, 3));
  PROBE(min(-1, 5u)); PROBE(max(-1, 5u)); PROBE(min(5u, -1)); PROBE(max(5u, -1)); PROBE(min(7u, 9u));
  PROBE(min(-1L, 5L)); PROBE(max(-2L, -3L)); PROBE(min(-1L, 5UL)); PROBE(max(5UL, -1L)); PROBE(min(4UL, 3UL));
  PROBE(min(-3LL, 2LL)); PROBE(max(-3LL, 2ULL)); PROBE(min(2ULL, -3LL)); PROBE(max(2ULL, 3ULL));
  PROBE(min(1.5f, 2.5f)); PROBE(max(1.5f, 2.5f)); PROBE(min(NAN, 1.0f)); PROBE(max(1.0f, NAN));
  PROBE(min(-0.0f, 0.0f)); PROBE(max(-0.0f, 0.0f)); PROBE(min(0.0, -0.0)); PROBE(max(0.0, -0.0));
  PROBE(min(2.5, 1.0)); PROBE(min(static_cast<double>(NAN), 1.0)); PROBE(max(2.5, 1.0f));
  PROBE(min(3.0f, -0.5)); PROBE(max(3.0f, -0.5)); PROBE(min(1e300, 1.0f));
  return 0;
}
)";

}  // namespace

TEST_CASE("the cuda_sources glue has nvcc's host min and max: same results and result types as nvcc") {
  GlueBuilder glue("dbfp-minmax");
  const Toolchain& t = glue.toolchain();
  std::string nvcc = nvcc_path(t);
  if (nvcc.empty()) {
    MESSAGE("no nvcc beside " << t.glue.cuda_include_dir << ": nothing to compare the shim's host min/max with");
    return;
  }
  std::string dir = glue.folder();
  write(dir + "/probe.cu", kMinMaxProbe);
  auto by_nvcc = run_process({nvcc, "-o", dir + "/probe_nvcc", dir + "/probe.cu"}, 300);
  REQUIRE(by_nvcc.ok());
  REQUIRE_MESSAGE(by_nvcc->exit_code == 0, by_nvcc->output);
  // The glue's own prelude (what g++ sees before a cuda_sources host part).
  auto by_gxx = run_process({t.glue.cxx, "-std=c++17", "-x", "c++", "-include", "dbfp/prelude_cuda.h",
                             "-I" + t.glue.shim_dir, "-I" + t.glue.cuda_include_dir, "-o", dir + "/probe_gxx",
                             dir + "/probe.cu", "-L" + t.glue.cuda_library_dir, "-lcudart"},
                            300);
  REQUIRE(by_gxx.ok());
  REQUIRE_MESSAGE(by_gxx->exit_code == 0, by_gxx->output);
  auto nvcc_run = run_process({dir + "/probe_nvcc"}, 60);
  auto gxx_run = run_process({dir + "/probe_gxx"}, 60);
  REQUIRE(nvcc_run.ok());
  REQUIRE(gxx_run.ok());
  CHECK(nvcc_run->exit_code == 0);
  CHECK(gxx_run->exit_code == 0);
  std::printf("\nhost min/max under nvcc:\n%s", nvcc_run->output.c_str());
  CHECK(gxx_run->output == nvcc_run->output);
  // Spot checks, so that a probe that printed nothing on both sides fails too.
  CHECK(nvcc_run->output.find("max(-1, 5u)              unsigned           4294967295 0") != std::string::npos);
  CHECK(nvcc_run->output.find("min(NAN, 1.0f)           float              1 0") != std::string::npos);

  // Calls nvcc finds ambiguous (or not) are so in the glue too.
  for (const char* call : {"min(1, 2.0)", "min(1, 2L)", "max(1u, 2L)", "min(1.0f, 2)", "max('a', 2ULL)"}) {
    CAPTURE(call);
    std::string source = std::string("double f() { return ") + call + "; }\n";
    write(dir + "/call.cu", source);
    auto n = run_process({nvcc, "-c", "-o", dir + "/call_nvcc.o", dir + "/call.cu"}, 300);
    auto g = run_process(
        {t.glue.cxx, "-std=c++17", "-x", "c++", "-c", "-include", "dbfp/prelude_cuda.h", "-I" + t.glue.shim_dir,
         "-I" + t.glue.cuda_include_dir, "-o", dir + "/call_gxx.o", dir + "/call.cu"},
        300);
    REQUIRE(n.ok());
    REQUIRE(g.ok());
    CHECK((n->exit_code == 0) == (g->exit_code == 0));
  }
}

TEST_CASE("min and max: in cuda_sources host code, not in cpp_sources (g++ in torch's build too)") {
  GlueBuilder glue("dbfp-minmax-units");
  Built cuda = glue.build(
      "void f();", cuda_unit("#include <torch/extension.h>", "  int b = min(256, 100) + max(1, 2);\n  (void)b;"), "f");
  CHECK_MESSAGE(cuda.ok, cuda.message);
  Built cpp = glue.build("int f(int a, int b) { return min(a, b); }", "", "f");
  CHECK_FALSE(cpp.ok);
  CHECK(cpp.message.find("'min' was not declared") != std::string::npos);
}

TEST_CASE(
    "the allocator, cuDNN, torch::tensor and TORCH_CHECK_GT and friends compile where torch's headers declare them") {
  GlueBuilder glue("dbfp-shim-headers");
  const std::string cpp = "void f();";
  auto ok = [&](const std::string& includes, const std::string& body) {
    Built b = glue.build(cpp, cuda_unit(includes, body), "f");
    CHECK_MESSAGE(b.ok, b.message);
    return b;
  };
  auto rejected = [&](const std::string& includes, const std::string& body, const std::string& error) {
    Built b = glue.build(cpp, cuda_unit(includes, body), "f");
    CHECK_FALSE(b.ok);
    CHECK_MESSAGE(b.message.find(error) != std::string::npos, b.message);
  };
  const std::string allocator = "#include <torch/extension.h>\n#include <c10/cuda/CUDACachingAllocator.h>";
  ok(allocator,
     "  c10::DataPtr p = c10::cuda::CUDACachingAllocator::get()->allocate(64);\n"
     "  c10::DataPtr q = std::move(p);\n  bool held = q; void* raw = q.get(); c10::Device d = q.device(); q.clear();\n"
     "  void* r = c10::cuda::CUDACachingAllocator::raw_alloc(16);\n"
     "  void* s = c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(16, at::cuda::getCurrentCUDAStream());\n"
     "  c10::cuda::CUDACachingAllocator::raw_delete(r); c10::cuda::CUDACachingAllocator::get()->raw_delete(s);\n"
     "  (void)held; (void)raw; (void)d;");
  // A DataPtr owns its memory: it is not copied (torch's is move-only too).
  rejected(allocator, "  auto p = c10::cuda::CUDACachingAllocator::get()->allocate(64);\n  c10::DataPtr q = p;",
           "deleted");
  // torch/extension.h alone does not declare the allocator.
  rejected("#include <torch/extension.h>", "  c10::cuda::CUDACachingAllocator::raw_delete(nullptr);", "error:");

  Built blaslt = ok("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>",
                    "  cublasLtHandle_t h = at::cuda::getCurrentCUDABlasLtHandle(); cublasLtMatmulDesc_t d;\n"
                    "  cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F); (void)h;");
  CHECK(blaslt.host_libraries == std::vector<std::string>{"cublasLt"});

  // cuDNN: torch's handle, the library linked, AT_CUDNN_CHECK from ATen/cuda/Exceptions.h or
  // CUDAContext.h; Handle.h alone has no AT_CUDNN_CHECK in torch either.
  const std::string cudnn_body =
      "  cudnnHandle_t h = at::native::getCudnnHandle(); cudnnTensorDescriptor_t d;\n"
      "  AT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d), \" at \", __LINE__);\n"
      "  AT_CUDNN_CHECK_WITH_SHAPES(cudnnDestroyTensorDescriptor(d)); (void)h;";
  if (cudnn_available()) {
    for (const char* exceptions : {"ATen/cuda/Exceptions.h", "ATen/cuda/CUDAContext.h", "ATen/cuda/CUDAUtils.h"}) {
      CAPTURE(exceptions);
      Built b =
          ok(std::string("#include <torch/extension.h>\n#include <ATen/cudnn/Handle.h>\n#include <") + exceptions + ">",
             cudnn_body);
      CHECK(std::find(b.host_libraries.begin(), b.host_libraries.end(), "cudnn") != b.host_libraries.end());
    }
    rejected("#include <torch/extension.h>\n#include <ATen/cudnn/Handle.h>", cudnn_body, "AT_CUDNN_CHECK");
  } else {
    // Without cuDNN in the toolkit's folders torch's build cannot compile it either: the fast path declines.
    MESSAGE("no cudnn.h and libcudnn.so in the CUDA toolkit's folders: cuDNN glue is expected to fail");
    rejected("#include <torch/extension.h>\n#include <ATen/cudnn/Handle.h>\n#include <ATen/cuda/Exceptions.h>",
             cudnn_body, "cudnn");
  }
  rejected("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>",
           "  cudnnHandle_t h = at::native::getCudnnHandle(); (void)h;", "cudnnHandle_t");

  // torch::tensor: the forms torch takes; std::vector<bool> it does not take.
  ok("#include <torch/extension.h>",
     "  torch::Tensor x = torch::zeros({2, 3});\n"
     "  auto a = torch::tensor(x.sizes(), x.options().dtype(torch::kLong));\n"
     "  auto b = torch::tensor({1, 2, 3}); auto c = torch::tensor({{1.5f}, {2.5f}}, torch::kDouble);\n"
     "  auto d = torch::tensor(2.5); auto e = torch::tensor(std::vector<float>{1.f}, torch::requires_grad());\n"
     "  auto g = torch::tensor({}); auto h = torch::tensor(at::ArrayRef<bool>({true, false}));");
  rejected("#include <torch/extension.h>", "  auto t = torch::tensor(std::vector<bool>{true});", "error:");

  // TORCH_CHECK_<op>: an expression that takes more << and sits in an if without braces.
  ok("#include <torch/extension.h>",
     "  int n = 3;\n  if (n > 0) TORCH_CHECK_GT(n, 0) << \"n: \" << n; else TORCH_CHECK_EQ(n, 0);\n"
     "  TORCH_CHECK_NE(n, 1); TORCH_CHECK_LE(n, 3); TORCH_CHECK_LT(n, 4); TORCH_CHECK_GE(n, 3);\n"
     "  TORCH_CHECK_WITH(ValueError, n == 3, \"n is \", n);");
}

TEST_CASE("TORCH_CHECK_GT and friends fail as torch's does: stderr and c10::Error with the logger's message") {
  GlueBuilder glue("dbfp-check-op");
  const Toolchain& t = glue.toolchain();
  std::string dir = glue.folder();
  write(dir + "/check.cpp",
        "#include <torch/extension.h>\n#include <cstdio>\n"
        "int main() {\n"
        "  int a = 1, b = 2;\n"
        "  TORCH_CHECK_LT(a, b) << \"not printed\";\n"
        "  try { TORCH_CHECK_GT(a, b) << \"and \" << 3; std::puts(\"no throw\"); }\n"
        "  catch (const c10::Error& e) { std::printf(\"caught: %s\", e.what()); }\n"
        "  try { TORCH_CHECK_WITH(ValueError, a == b, \"a is \", a); }\n"
        "  catch (const c10::ValueError& e) { std::printf(\"value error: %s\\n\", e.what()); }\n"
        "  return 0;\n}\n");
  auto built = run_process({t.glue.cxx, "-std=c++17", "-I" + t.glue.shim_dir, "-I" + t.glue.cuda_include_dir, "-o",
                            dir + "/check", dir + "/check.cpp"},
                           300);
  REQUIRE(built.ok());
  REQUIRE_MESSAGE(built->exit_code == 0, built->output);
  auto ran = run_process({dir + "/check"}, 60);
  REQUIRE(ran.ok());
  CHECK(ran->exit_code == 0);
  const std::string& out = ran->output;  // stderr and stdout together
  CHECK(out.find("no throw") == std::string::npos);
  CHECK(out.find("not printed") == std::string::npos);
  // "[F<month><day> hh:mm:ss.nanoseconds check.cpp:<line>] Check failed: a > b (1 vs. 2). and 3\n",
  // once on stderr and once as the exception's message.
  std::size_t first = out.find("check.cpp:6] Check failed: a > b (1 vs. 2). and 3\n");
  REQUIRE(first != std::string::npos);
  CHECK(out.find("check.cpp:6] Check failed: a > b (1 vs. 2). and 3\n", first + 1) != std::string::npos);
  CHECK(out.find("caught: [F") != std::string::npos);
  CHECK(out.find("value error: a is 1\n") != std::string::npos);
}
