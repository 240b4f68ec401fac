// The static backend check (benchmarks/kernelbench/backend_check.hpp): candidates that use the
// language they were asked for pass however they spell its names, and decoys, torch-only programs
// and languages named only in comments or strings are flagged with the reason.
#include "benchmarks/kernelbench/backend_check.hpp"
#include "benchmarks/kernelbench/python_source.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace dicebench::kernelbench;

namespace {

std::optional<std::string> check(std::string_view backend, const std::string& source) {
  const KernelBackend* b = find_backend(backend);
  REQUIRE(b != nullptr);
  return backend_unused(*b, source);
}

// The reason, or "uses it".
std::string verdict(std::string_view backend, const std::string& source) {
  return check(backend, source).value_or("uses it");
}

const std::string kTritonHeader = "import torch\nimport triton\nimport triton.language as tl\n\n";

const std::string kTritonKernel = R"(
@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)
)";

const std::string kTritonLaunch = R"(
class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
        return out
)";

}  // namespace

TEST_CASE("python_lines joins bracketed and continued lines, drops comments, keeps strings as strings") {
  const auto lines =
      python_lines("x = f(a,\n      b)  # call\ny = 'it''s' \\\n  + \"\"\"three\nlines\"\"\"\n\tz = 1\n");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].tokens.size() == 8);
  CHECK(lines[1].tokens[2].kind == PyToken::Kind::string);
  CHECK(lines[1].tokens.back().text == "three\nlines");
  CHECK(lines[2].indent == 8);
  CHECK(python_lines("# only a comment\n").empty());
  CHECK(python_lines("s = 'never closed").size() == 1);  // no error: Python's to report
}

TEST_CASE("PyNames resolves imports, from-imports, star imports and aliases") {
  const PyNames names(
      python_lines("import triton as tr, torch\nimport triton.language\nfrom triton import language as L, jit\n"
                   "from torch.utils.cpp_extension import (load_inline as build,)\nmy_jit = tr.jit\n"));
  using Meanings = std::vector<std::string>;
  CHECK(names.meanings("tr.jit") == Meanings{"triton.jit"});
  CHECK(names.meanings("triton.language.load") == Meanings{"triton.language.load"});
  CHECK(names.meanings("L.store") == Meanings{"triton.language.store"});
  CHECK(names.meanings("jit") == Meanings{"triton.jit"});
  CHECK(names.meanings("build") == Meanings{"torch.utils.cpp_extension.load_inline"});
  CHECK(names.meanings("my_jit") == Meanings{"triton.jit"});
  CHECK(names.meanings("local_variable") == Meanings{"local_variable"});
  CHECK(names.imports("triton"));
  CHECK(names.imports("torch.utils"));
  CHECK_FALSE(names.imports("cutlass"));
  const PyNames star(python_lines("from triton import *\nfrom triton.language import *\n"));
  CHECK(star.meanings("load") == Meanings{"load", "triton.load", "triton.language.load"});
}

TEST_CASE("a Triton candidate that launches its kernel uses Triton") {
  CHECK(verdict("triton", kTritonHeader + kTritonKernel + kTritonLaunch) == "uses it");
}

TEST_CASE("renamed modules, decorators and launch handles still read as Triton") {
  // Module and language under other names, the kernel launched through an attribute.
  CHECK(verdict("triton", R"(import torch
import triton as tr
from triton import language as L

@tr.jit
def k(x, o, n, B: L.constexpr):
    i = L.program_id(0) * B + L.arange(0, B)
    L.store(o + i, L.load(x + i, mask=i < n), mask=i < n)

class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.launcher = k
    def forward(self, x):
        o = torch.empty_like(x)
        self.launcher[(1,)](x, o, x.numel(), B=1024)
        return o
)") == "uses it");
  // The decorator imported under another name, with autotune's arguments over several lines.
  CHECK(verdict("triton", R"(import torch, triton
from triton import jit as compile_me, autotune
from triton.language import load, store, program_id

@autotune(
    configs=[triton.Config({'B': 128}), triton.Config({'B': 256})],
    key=['n'],
)
@compile_me
def k(x, o, n, B):
    store(o + program_id(0), load(x + program_id(0)))

def run(x, o):
    k[(x.numel(),)](x, o, x.numel())
)") == "uses it");
  // Decorated by a call rather than an @.
  CHECK(verdict("triton", kTritonHeader + R"(
def body(x, o):
    tl.store(o, tl.load(x))
kernel = triton.jit(body)
def forward(x, o):
    kernel[(1,)](x, o)
)") == "uses it");
  // Everything from star imports.
  CHECK(verdict("triton", R"(from triton import *
from triton.language import *

@jit
def k(x, o):
    store(o, load(x))

def forward(x, o):
    k[(1,)](x, o)
)") == "uses it");
}

TEST_CASE("Triton candidates that do not use Triton are flagged with the reason") {
  // The decoy: defined, stored under another name, never launched.
  CHECK(verdict("triton", kTritonHeader + kTritonKernel + R"(
class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = relu_kernel
        self.spare = self.kernel
    def forward(self, x):
        return torch.relu(x)
)") == "defines triton kernels (relu_kernel) but never launches one");
  // torch only, Triton imported for show.
  CHECK(verdict("triton",
                kTritonHeader +
                    "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n") ==
        "defines no triton kernel (no function under @triton.jit)");
  // Triton named only in a comment and a string.
  CHECK(verdict("triton", kTritonHeader + "# @triton.jit\nDOC = '''\n@triton.jit\ndef k(): tl.store(0, 1)\n'''\n") ==
        "defines no triton kernel (no function under @triton.jit)");
  // Not imported at all.
  CHECK(verdict("triton", "import torch\ndef forward(x):\n    return x\n") == "does not import triton");
  // A kernel that does no memory work, launched.
  CHECK(verdict("triton",
                kTritonHeader + "@triton.jit\ndef k(n):\n    i = tl.arange(0, 16)\n\ndef f():\n    k[(1,)](4)\n") ==
        "its triton kernels (k) use none of tl.load, tl.store or tl.atomic_*");
  // tl.load outside the kernel (in Python code that is never compiled) does not count.
  CHECK(verdict("triton",
                kTritonHeader + "@triton.jit\ndef k(n):\n    pass\n\ndef f(x):\n    tl.load(x)\n    k[(1,)](4)\n") ==
        "its triton kernels (k) use none of tl.load, tl.store or tl.atomic_*");
}

TEST_CASE("a CUDA candidate must build a __global__ kernel through torch's extension builder") {
  const std::string kernel = R"(
source = """
__global__ void relu(const float* x, float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = fmaxf(x[i], 0.f); }
"""
)";
  CHECK(verdict("cuda", "from torch.utils.cpp_extension import load_inline\n" + kernel +
                            "m = load_inline(name='r', cpp_sources='', cuda_sources=source)\n") == "uses it");
  CHECK(verdict("cuda", "import torch.utils.cpp_extension as ext\n" + kernel +
                            "m = ext.load_inline(name='r', cpp_sources='', cuda_sources=source)\n") == "uses it");
  CHECK(verdict("cuda", "from torch.utils.cpp_extension import load_inline as build\n" + kernel +
                            "m = build('r', '', source)\n") == "uses it");
  CHECK(verdict("cuda", "import torch\ndef forward(x):\n    return torch.relu(x)\n") ==
        "builds no CUDA extension (no call of torch.utils.cpp_extension.load_inline or load)");
  CHECK(verdict("cuda",
                "from torch.utils.cpp_extension import load_inline\n# __global__ void k() {}\nm = load_inline('r', '', "
                "'int f() { return 0; }')\n") == "no string in it holds a __global__ kernel");
  // Naming the builder without calling it does not build anything.
  CHECK(verdict("cuda", "from torch.utils.cpp_extension import load_inline\n" + kernel) ==
        "builds no CUDA extension (no call of torch.utils.cpp_extension.load_inline or load)");
}

TEST_CASE("CuTe DSL and TileLang kernels are read the same way") {
  const std::string cute = R"(import torch
import cutlass.cute as cute

@cute.kernel
def add_kernel(gA: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    gC[tidx] = gA[tidx]

@cute.jit
def add_host(mA: cute.Tensor, mC: cute.Tensor):
)";
  CHECK(verdict("cute", cute + "    add_kernel(mA, mC).launch(grid=(1, 1, 1), block=(32, 1, 1))\n") == "uses it");
  CHECK(verdict("cute", cute + "    return None\n") == "defines cute kernels (add_kernel) but never launches one");
  // Only the header's annotations name CuTe: no device work.
  CHECK(verdict("cute",
                "import cutlass.cute as cute\n@cute.kernel\ndef k(g: cute.Tensor):\n    g[0] = 1\nk(1).launch()\n") ==
        "its cute kernels (k) use none of cutlass.cute");

  const std::string tilelang = R"(import tilelang
import tilelang.language as T

def build(M, N):
    @T.prim_func
    def add(A: T.Tensor((M, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                C[0, bx * 128 + i] = A[0, bx * 128 + i]
)";
  CHECK(verdict("tilelang", tilelang + "    return tilelang.compile(add, out_idx=[1])\n") == "uses it");
  CHECK(verdict("tilelang", tilelang + "    return None\n") == "defines tilelang kernels (add) but never launches one");
}

TEST_CASE("backends without a source check (refused ones) report nothing") {
  CHECK_FALSE(check("hip", "anything").has_value());
  CHECK_FALSE(check("thunderkittens", "anything").has_value());
}

TEST_CASE(
    "a source built to make the check quadratic (thousands of renamings in reverse order) is read in bounded time") {
  // Before the renaming bound, 4000 such lines kept the host's review busy for over two minutes.
  std::string source = kTritonHeader + kTritonKernel;
  for (int i = 4000; i > 0; --i) source += "a" + std::to_string(i) + " = a" + std::to_string(i - 1) + "\n";
  source += "a0 = relu_kernel\na4000[(1,)](1, 2, 3, BLOCK=4)\n";
  // Renamings deeper than any honest candidate's are not followed: the launch is not seen.
  CHECK(verdict("triton", source) == "defines triton kernels (relu_kernel) but never launches one");
  // A short chain still is.
  CHECK(verdict("triton", kTritonHeader + kTritonKernel + "b = a\na = relu_kernel\nb[(1,)](1, 2, 3, BLOCK=4)\n") ==
        "uses it");
}
