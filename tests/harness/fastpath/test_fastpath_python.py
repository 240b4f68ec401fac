"""Unit tests of the fast path's Python package (dicebench_fastpath), on the CPU.

torch's own load_inline is replaced by a recording fake wherever a test would otherwise fall back
to it (a real build takes a minute); the C++-only candidate is loaded and run for real on CPU
tensors and compared with the same computation written with torch in Python.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from typing import Any

from fastpath_test_support import CANDIDATES, candidate_header, cudnn_in_toolkit, exec_candidate, native_available

import torch
import torch.utils.cpp_extension as cpp_extension

import dicebench_fastpath
from dicebench_fastpath import _load_inline as impl

ORIGINAL_LOAD_INLINE = cpp_extension.load_inline


class FakeTorchToolchain:
    """Stands in for torch's load_inline: records its calls, returns a marker module."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple, dict]] = []

    def __call__(self, name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None,
                 extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None,
                 extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
                 with_sycl=None, is_python_module=True, with_pytorch_error_handling=True,
                 keep_intermediates=True, use_pch=False, no_implicit_headers=False) -> Any:
        self.calls.append(((name, cpp_sources, cuda_sources, functions), {"extra_ldflags": extra_ldflags}))
        return "torch-built"


@unittest.skipUnless(native_available(), "dicebench_fastpath_native is not built")
class FastPathTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # One cache for the class: the precompiled preludes are built once.
        cls.cache = tempfile.mkdtemp(prefix="dbfp-python-")

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.cache, ignore_errors=True)

    def setUp(self) -> None:
        self.fake = FakeTorchToolchain()
        cpp_extension.load_inline = self.fake
        self.lines: list[str] = []
        dicebench_fastpath.install("sm_90", self.cache, self.lines.append)
        impl._records.clear()

    def tearDown(self) -> None:
        dicebench_fastpath.uninstall()
        cpp_extension.load_inline = ORIGINAL_LOAD_INLINE

    def run_candidate(self, file: str):
        return exec_candidate(os.path.join(CANDIDATES, file), file[:-3])

    def test_install_replaces_and_uninstall_restores(self) -> None:
        self.assertTrue(dicebench_fastpath.installed())
        self.assertIsNot(cpp_extension.load_inline, self.fake)
        self.assertTrue(getattr(cpp_extension.load_inline, "__dicebench_fastpath__", False))
        dicebench_fastpath.uninstall()
        self.assertIs(cpp_extension.load_inline, self.fake)
        self.assertFalse(dicebench_fastpath.installed())

    def test_a_cpp_only_candidate_runs_on_the_fast_path_and_matches_torch(self) -> None:
        module = self.run_candidate("cpp_only_ops.py")
        self.assertEqual(self.fake.calls, [])
        records = dicebench_fastpath.compile_records()
        self.assertEqual(len(records), 1)
        self.assertEqual(records[0]["path"], "nvrtc")
        self.assertEqual(records[0]["name"], "cpp_only_ops")
        self.assertEqual(records[0]["reason"], "")
        torch.manual_seed(0)
        model = module.ModelNew()
        x = torch.randn(64, 32)
        outputs = model(x)
        # The same computation in Python.
        w = model.w.detach()
        h = torch.relu(x @ w.t()) * 0.5 + 1.0
        joined = torch.cat([torch.softmax(h, -1), h.sum([1], keepdim=True)], 1)
        y = torch.cat([joined, torch.full((joined.size(0), 2), 0.25)], 1)
        self.assertTrue(torch.equal(outputs[0], y))
        expected = []
        for t in (x, y):
            expected += [t.mean([0], keepdim=True), t.max(0, keepdim=True)[0], torch.full((1,), float(t.numel()))]
        self.assertEqual(len(outputs), 1 + len(expected))
        for got, want in zip(outputs[1:], expected):
            self.assertTrue(torch.equal(got, want))

    def test_arguments_convert_as_pybind11_would(self) -> None:
        module = self.run_candidate("cpp_only_ops.py")
        fused = module.module.fused_ops
        x, w = torch.randn(4, 3), torch.randn(5, 3)
        with self.assertRaises(TypeError):
            fused(x, w, 0.5)  # too few
        with self.assertRaises(TypeError):
            fused(x, w, "0.5", 1)  # str for double
        with self.assertRaises(TypeError):
            fused(x, w, 0.5, 1.5)  # float for int64_t
        with self.assertRaises(TypeError):
            fused(x, w, 0.5, dim=1)  # no keyword arguments
        with self.assertRaises(TypeError):
            fused(x.tolist(), w, 0.5, 1)  # a list is not a tensor
        self.assertEqual(fused(x, w, 1, torch.tensor(1)).shape, (4, 8))  # int for double; 0-dim tensor for int
        with self.assertRaises(RuntimeError):
            fused(x, torch.randn(5, 4), 0.5, 1)  # ATen's error comes through as RuntimeError
        stats = module.module.stats
        self.assertEqual(len(stats((x, w), False)), 6)  # a tuple for std::vector<Tensor>
        with self.assertRaises(TypeError):
            stats([x, 1], False)

    def test_tensors_made_while_the_glue_loads(self) -> None:
        source = ("static torch::Tensor made_at_load = torch::full({2}, 3.0);\n"
                  "torch::Tensor cached() { return made_at_load; }\n")
        module = cpp_extension.load_inline("static_init", source, functions=["cached"])
        self.assertEqual(dicebench_fastpath.compile_records()[-1]["path"], "nvrtc")
        self.assertTrue(torch.equal(module.cached(), torch.full((2,), 3.0)))
        self.assertEqual(module.cached()._cdata, module.cached()._cdata)  # the same tensor each time

    def test_a_candidate_the_fast_path_declines_goes_to_torch_with_the_same_arguments(self) -> None:
        module = self.run_candidate("deduced_template.py")
        self.assertEqual(module.module, "torch-built")
        self.assertEqual(len(self.fake.calls), 1)
        (name, cpp_sources, cuda_sources, functions), _ = self.fake.calls[0]
        self.assertEqual(name, "deduced_template")
        self.assertIs(cuda_sources, module.cuda_source)
        self.assertEqual(functions, ["square_cuda"])
        record = dicebench_fastpath.compile_records()[0]
        self.assertEqual(record["path"], "fallback")
        self.assertIn("template", record["reason"])
        self.assertTrue(any("torch's toolchain" in line for line in self.lines))

    def test_unsupported_host_code_falls_back_with_the_compilers_first_error(self) -> None:
        self.run_candidate("unsupported_indexing.py")
        record = dicebench_fastpath.compile_records()[0]
        self.assertEqual(record["path"], "fallback")
        self.assertIn("g++", record["reason"])
        self.assertIn("indexing", record["reason"])
        self.assertEqual(len(self.fake.calls), 1)

    def test_the_builder_learns_which_sources_failed_to_compile(self) -> None:
        asked: list[tuple[str, str]] = []

        def builder(arguments: dict, failed: str) -> Any:
            asked.append((arguments["name"], failed))
            return "host-built"

        dicebench_fastpath.install("sm_90", self.cache, self.lines.append, builder=builder)
        self.assertEqual(self.run_candidate("unsupported_indexing.py").module, "host-built")
        self.assertEqual(self.run_candidate("deduced_template.py").module, "host-built")
        self.assertEqual(asked, [("unsupported_indexing", "cuda_sources"), ("deduced_template", "")])
        self.assertEqual(self.fake.calls, [])  # both built by the builder, none by torch here
        self.assertEqual(impl.failed_sources("NVRTC: kernel.cu(4): error: identifier \"k\" is undefined"),
                         "cuda_sources")
        self.assertEqual(impl.failed_sources("g++ (cpp_sources glue): main.cpp:3: error"), "cpp_sources")
        self.assertEqual(impl.failed_sources("extra_include_paths (other than torch's own)"), "")

    @unittest.skipIf(torch.cuda.is_available(), "a GPU is visible: the kernels would load")
    def test_kernels_without_a_gpu_fall_back_after_compiling(self) -> None:
        self.run_candidate("elementwise_add.py")
        record = dicebench_fastpath.compile_records()[0]
        self.assertEqual(record["path"], "fallback")
        self.assertIn("no CUDA device", record["reason"])
        self.assertEqual(record["kernels"], [])
        self.assertEqual(record["kernel_names"], ["elementwise_add_kernel"])
        self.assertEqual(len(self.fake.calls), 1)

    def test_compile_only_mode_compiles_to_the_cache_and_a_second_call_hits(self) -> None:
        dicebench_fastpath.install("9.0", self.cache, self.lines.append, compile_only=True)
        shutil.rmtree(os.path.join(self.cache, "entries"), ignore_errors=True)
        module = self.run_candidate("two_kernels.py")
        self.run_candidate("two_kernels.py")
        first, second = dicebench_fastpath.compile_records()
        self.assertEqual(first["path"], "nvrtc")
        self.assertFalse(first["cache_hit"])
        self.assertTrue(second["cache_hit"])
        self.assertEqual(first["kernel_names"], ["row_max_kernel", "exp_normalize_kernel"])
        self.assertTrue(all(k.startswith("_Z") for k in first["kernels"]))
        self.assertLess(second["seconds"], first["seconds"])
        with self.assertRaises(RuntimeError):
            module.module.softmax_cuda(torch.randn(2, 2))
        self.assertEqual(self.fake.calls, [])

    def test_arguments_bind_like_torchs_signature(self) -> None:
        dicebench_fastpath.install("sm_90", self.cache, self.lines.append, compile_only=True)
        source = "torch::Tensor twice(torch::Tensor x) { return x * 2; }"
        replacement = cpp_extension.load_inline
        replacement("positional", [source], None, None, {"twice": "doc"})
        replacement(name="keywords", cpp_sources=source, functions="twice", extra_cflags=["-O3"])
        replacement("bad", source, functions=["twice"], extra_include_paths=["/tmp"])
        # torch's own folders, which its build puts on the path anyway: taken, unless -Werror would
        # make their headers' warnings count; with any other folder beside them, declined.
        torch_dirs = cpp_extension.include_paths(device_type="cuda")
        replacement("torch_dirs", source, functions=["twice"], extra_include_paths=torch_dirs[:1] + [torch_dirs[0] + "/"])
        replacement("werror", source, functions=["twice"], extra_include_paths=torch_dirs[:1], extra_cflags=["-Werror"])
        replacement("mixed", source, functions=["twice"], extra_include_paths=torch_dirs[:1] + ["/tmp"])
        replacement("sycl", source, sycl_sources="x", functions=["twice"])
        with self.assertRaises(TypeError):  # torch's own load_inline refuses it, as without the fast path
            replacement("unbindable", source, functions=["twice"], not_an_argument=1)
        paths = [(r["name"], r["path"]) for r in dicebench_fastpath.compile_records()]
        self.assertEqual(paths, [("positional", "nvrtc"), ("keywords", "nvrtc"), ("bad", "fallback"),
                                 ("torch_dirs", "nvrtc"), ("werror", "fallback"), ("mixed", "fallback"),
                                 ("sycl", "fallback"), ("unbindable", "fallback")])
        reasons = [r["reason"] for r in dicebench_fastpath.compile_records()]
        self.assertIn("extra_include_paths", reasons[2])
        self.assertIn("extra_include_paths", reasons[4])
        self.assertIn("extra_include_paths", reasons[5])
        self.assertIn("sycl", reasons[6])
        self.assertIn("arguments do not fit", reasons[7])

    def test_torchs_own_failures_propagate_and_are_recorded(self) -> None:
        def failing(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("Error building extension 'x'")

        dicebench_fastpath.uninstall()
        cpp_extension.load_inline = failing
        dicebench_fastpath.install("sm_90", self.cache)
        with self.assertRaises(RuntimeError):
            cpp_extension.load_inline("x", "int f(", functions=None)
        record = dicebench_fastpath.compile_records()[-1]
        self.assertEqual(record["path"], "fallback")
        self.assertIn("Error building extension", record["error"])

    def test_without_the_native_module_every_call_falls_back(self) -> None:
        saved = impl._import_native
        impl._import_native = lambda: (_ for _ in ()).throw(ImportError("no module"))
        try:
            dicebench_fastpath.install("sm_90", self.cache, self.lines.append)
        finally:
            impl._import_native = saved
        self.assertEqual(cpp_extension.load_inline("m", "int f();", functions=["f"]), "torch-built")
        record = dicebench_fastpath.compile_records()[-1]
        self.assertEqual(record["path"], "fallback")
        self.assertIn("fast path unavailable", record["reason"])


@unittest.skipUnless(native_available(), "dicebench_fastpath_native is not built")
class HostGlueWithoutKernelsTest(unittest.TestCase):
    """The host glue of CUDA candidates, run on CPU tensors with an empty kernel table: everything
    but the kernels runs (argument packing, the launcher, AT_DISPATCH, checks); a launch fails as a
    <<<>>> launch does, quietly, leaving its error for cudaGetLastError()."""

    @classmethod
    def setUpClass(cls) -> None:
        import dicebench_fastpath_native as native

        cls.native = native
        cls.cache = tempfile.mkdtemp(prefix="dbfp-glue-")
        cls.toolchain = dict(native.default_toolchain(), cache_dir=cls.cache)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.cache, ignore_errors=True)

    def functions(self, file: str) -> dict:
        import re

        with open(os.path.join(CANDIDATES, file), encoding="utf-8") as handle:
            text = handle.read()
        cuda = re.search(r'cuda_source = r"""(.*?)"""', text, re.S).group(1)
        cpp = re.search(r'cpp_source = (?:r?"""(.*?)"""|"(.*?)")', text, re.S)
        header = candidate_header(os.path.join(CANDIDATES, file))
        outcome = self.native.compile({"name": file, "cpp_sources": [cpp.group(1) or cpp.group(2)],
                                       "cuda_sources": [cuda], "functions": header["functions"], "arch": "sm_90"},
                                      self.toolchain)
        self.assertTrue(outcome["ok"], outcome["reason"])
        return self.native.load(outcome["entry_dir"], outcome["kernels"], load_kernels=False)

    def test_elementwise_add_runs_up_to_its_launch(self) -> None:
        add = self.functions("elementwise_add.py")["elementwise_add_cuda"]
        out = add(torch.ones(10), torch.ones(10))
        self.assertTrue(torch.equal(out, torch.zeros(10)))  # zeros_like, and no kernel ran

    def test_dispatch_and_checks_of_the_glue(self) -> None:
        leaky = self.functions("dispatch_kernel.py")["leaky_relu_cuda"]
        self.assertEqual(leaky(torch.ones(3, dtype=torch.float64), 0.1).dtype, torch.float64)
        self.assertEqual(leaky(torch.ones(3), 0.1).dtype, torch.float32)
        with self.assertRaisesRegex(NotImplementedError, "not implemented for 'Int'"):
            leaky(torch.ones(3, dtype=torch.int32), 0.1)
        scale_add = self.functions("templated_kernel.py")["scale_add_cuda"]
        self.assertEqual(scale_add(torch.ones(5), torch.ones(5), 2.0).shape, (5,))
        with self.assertRaisesRegex(RuntimeError, "unsupported dtype Int"):
            scale_add(torch.ones(5, dtype=torch.int32), torch.ones(5, dtype=torch.int32), 2.0)
        with self.assertRaisesRegex(RuntimeError, "x and y differ in shape"):
            scale_add(torch.ones(5), torch.ones(6), 2.0)
        row_sum = self.functions("row_reduction.py")["row_sum_cuda"]
        with self.assertRaisesRegex(RuntimeError, "x must be a CUDA tensor"):
            row_sum(torch.ones(2, 3))

    def test_a_wrong_data_ptr_type_is_torchs_error(self) -> None:
        add = self.functions("elementwise_add.py")["elementwise_add_cuda"]
        with self.assertRaisesRegex(RuntimeError, "expected scalar type Float but found Double"):
            add(torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))

    def test_host_code_compiles_at_the_level_torchs_build_would(self) -> None:
        # g++ for cpp_sources, nvcc's host compiler for cuda_sources: -O0 unless the candidate's
        # extra_cflags / extra_cuda_cflags (-O<n>, -Xcompiler -O<n>) say otherwise.
        probe = "\n#ifdef __OPTIMIZE__\n  return true;\n#else\n  return false;\n#endif\n}\n"
        cuda = "__global__ void probe_kernel() {}\nbool cuda_optimized() {" + probe
        cpp = "bool cuda_optimized();\nbool cpp_optimized() {" + probe
        for cflags, cuda_cflags, expected in (([], [], (False, False)),
                                              (["-O3"], [], (True, False)),
                                              ([], ["-O2"], (False, True)),
                                              (["-O0"], ["-Xcompiler", "-O1"], (False, True)),
                                              (["-O2"], ["-O3", "-O0"], (True, False))):
            outcome = self.native.compile({"name": "probe", "cpp_sources": [cpp], "cuda_sources": [cuda],
                                           "functions": ["cpp_optimized", "cuda_optimized"], "arch": "sm_90",
                                           "extra_cflags": cflags, "extra_cuda_cflags": cuda_cflags}, self.toolchain)
            self.assertTrue(outcome["ok"], outcome["reason"])
            functions = self.native.load(outcome["entry_dir"], outcome["kernels"], load_kernels=False)
            self.assertEqual((functions["cpp_optimized"](), functions["cuda_optimized"]()), expected,
                             (cflags, cuda_cflags))

    def test_torch_tensor_gives_torchs_dtypes_and_values(self) -> None:
        tensors = self.functions("tensor_factory.py")["tensors_cuda"]
        x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)

        def expected(default: torch.dtype) -> list:
            return [torch.tensor([2, 3, 4]), torch.tensor([12, 4, 1]), torch.tensor([1, 2, 3]),
                    torch.tensor([1.5, -2.25], dtype=default),
                    torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=torch.float32),
                    torch.tensor([[True], [False]]), torch.tensor(2.5, dtype=default),
                    torch.tensor(7, dtype=torch.int16), torch.tensor(True), torch.tensor(200, dtype=torch.uint8),
                    torch.tensor([0.5, 0.25], dtype=torch.float64), torch.tensor([4, 5, 6]),
                    torch.zeros(0, dtype=default), torch.zeros(0, dtype=default)]

        def check(default: torch.dtype) -> None:
            got = tensors(x)
            want = expected(default)
            self.assertEqual(len(got), len(want))
            for i, (a, b) in enumerate(zip(got, want)):
                self.assertEqual((a.dtype, a.shape, a.device, a.requires_grad), (b.dtype, b.shape, b.device, False), i)
                self.assertTrue(torch.equal(a, b), (i, a, b))

        check(torch.float32)
        # Floating lists and values take the default dtype, read at the call (torch.get_default_dtype()).
        self.addCleanup(torch.set_default_dtype, torch.get_default_dtype())
        torch.set_default_dtype(torch.float64)
        check(torch.float64)

    def test_host_min_max_are_nvccs(self) -> None:
        y, values = self.functions("host_min_max.py")["min_max_cuda"](torch.ones(100))
        self.assertEqual(y.shape, (100,))
        v = values.tolist()
        self.assertEqual(v[:11], [100, 100, 4294967295, 5, 1.0, 1.0, 2.5, -0.5, 2.0**64 - 3, 7, -2])
        self.assertEqual(v[13:], [100, 32, 10])

    def test_cudnn_and_check_errors_are_torchs(self) -> None:
        if not cudnn_in_toolkit(self.toolchain):
            self.skipTest("no cudnn.h and libcudnn.so in the CUDA toolkit's folders")
        functions = self.functions("cudnn_conv.py")
        with self.assertRaisesRegex(RuntimeError, r"^cuDNN error: CUDNN_STATUS_BAD_PARAM \(on purpose\)$"):
            functions["cudnn_error_cuda"](2000)
        with self.assertRaisesRegex(RuntimeError, r"^cuDNN error: CUDNN_STATUS_NOT_SUPPORTED\. This error may appear "
                                                  r"if you passed in a non-contiguous input\. \(on purpose\)$"):
            functions["cudnn_error_cuda"](3000)
        self.assertIsNone(functions["cudnn_error_cuda"](0))
        self.assertIsNone(functions["check_gt_cuda"](2, 1))
        with self.assertRaisesRegex(RuntimeError, r"^\[F\d{3,4} \d\d:\d\d:\d\d\.\d{9} cuda\.cu:\d+\] "
                                                  r"Check failed: a > b \(1 vs\. 2\)\. and more\n$"):
            functions["check_gt_cuda"](1, 2)

    def test_results_and_in_place_arguments(self) -> None:
        functions = self.functions("inplace_void.py")
        x = torch.ones(4)
        self.assertIsNone(functions["relu_inplace_cuda"](x))
        two = self.functions("two_kernels.py")["softmax_cuda"](torch.ones(3, 4))
        self.assertIsInstance(two, tuple)
        self.assertEqual([t.shape for t in two], [(3, 4), (3,)])


class ArchTest(unittest.TestCase):
    def test_normalize_arch(self) -> None:
        self.assertEqual(dicebench_fastpath.normalize_arch("sm_90"), "sm_90")
        self.assertEqual(dicebench_fastpath.normalize_arch("90"), "sm_90")
        self.assertEqual(dicebench_fastpath.normalize_arch("9.0"), "sm_90")
        self.assertEqual(dicebench_fastpath.normalize_arch((9, 0)), "sm_90")
        self.assertEqual(dicebench_fastpath.normalize_arch("sm_90a"), "sm_90a")
        with self.assertRaises(ValueError):
            dicebench_fastpath.normalize_arch("gfx90a")


class CandidateHeaderTest(unittest.TestCase):
    def test_every_candidate_says_what_to_expect(self) -> None:
        for file in os.listdir(CANDIDATES):
            if file.endswith(".py"):
                header = candidate_header(os.path.join(CANDIDATES, file))
                self.assertIn(header["expect"], ("nvrtc", "fallback"), file)
                self.assertTrue(header["functions"][0], file)


if __name__ == "__main__":
    unittest.main()
