"""GPU test of the fast path's argument conversion against torch's own build.

argument_types_extension's functions, its CUDA source included, are built once by torch's own
load_inline (nvcc and g++, about a minute) and once on the fast path; every call of cpu_calls()
and cuda_calls() is made with the same arguments, on CUDA tensors, of both modules. Both must give
identical results (or the same exception), and those results must be the ones torch computes in
Python. Skips itself where no GPU is visible. Prints both build times.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
import time
import unittest
from typing import Any

from argument_types_extension import (CPP_FUNCTIONS, CPP_SOURCE, CUDA_DECLARATIONS, CUDA_FUNCTIONS, CUDA_SOURCE,
                                      cpu_calls, cuda_calls, same_result)
from fastpath_test_support import native_available

import torch
import torch.utils.cpp_extension as cpp_extension

import dicebench_fastpath


def outcome(module: Any, function: str, arguments: tuple) -> tuple[Any, BaseException | None]:
    """The result of a call, or the exception it raised."""
    try:
        result = getattr(module, function)(*arguments)
        torch.cuda.synchronize()
        return result, None
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return None, error


@unittest.skipUnless(torch.cuda.is_available(), "no GPU visible")
@unittest.skipUnless(native_available(), "dicebench_fastpath_native is not built")
class ArgumentsMatchTorchsBuildOnTheGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.work = tempfile.mkdtemp(prefix="dbfp-arguments-gpu-")
        cls.addClassCleanup(shutil.rmtree, cls.work, ignore_errors=True)  # also when this setup fails
        cls.addClassCleanup(setattr, torch.backends.cudnn, "allow_tf32", torch.backends.cudnn.allow_tf32)
        torch.backends.cudnn.allow_tf32 = False  # the references' convolutions in float32
        cpp_source = CPP_SOURCE + CUDA_DECLARATIONS
        functions = CPP_FUNCTIONS + CUDA_FUNCTIONS
        torch_build = os.path.join(cls.work, "torch-build")
        os.makedirs(torch_build)
        started = time.perf_counter()
        cls.torch_module = cpp_extension.load_inline("dbfp_argument_types_torch", cpp_source, cuda_sources=CUDA_SOURCE,
                                                     functions=functions, build_directory=torch_build)
        torch_seconds = time.perf_counter() - started

        lines: list[str] = []
        original = cpp_extension.load_inline

        @functools.wraps(original)  # the fast path binds arguments to torch's signature
        def refuse_torchs_toolchain(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the fast path fell back to torch's toolchain: " + "\n".join(lines))

        cpp_extension.load_inline = refuse_torchs_toolchain
        try:
            dicebench_fastpath.install(dicebench_fastpath.detect_arch(), os.path.join(cls.work, "cache"), lines.append)
            started = time.perf_counter()
            cls.fast_module = cpp_extension.load_inline("dbfp_argument_types_fast", cpp_source,
                                                        cuda_sources=CUDA_SOURCE, functions=functions)
            fast_seconds = time.perf_counter() - started
            cls.records = dicebench_fastpath.compile_records()
        finally:
            dicebench_fastpath.uninstall()
            cpp_extension.load_inline = original
        print(f"\nargument_types: torch's build {torch_seconds:.2f} s, fast path {fast_seconds:.2f} s "
              "(precompiled preludes included)", file=sys.stderr)

    def test_the_fast_build_takes_the_nvrtc_path(self) -> None:
        self.assertEqual([r["path"] for r in self.records], ["nvrtc"])
        self.assertEqual(len(self.records[0]["kernels"]), 2)

    def test_every_call_gives_torchs_result(self) -> None:
        calls = cpu_calls() + cuda_calls()
        self.assertEqual({c.function for c in calls}, set(CPP_FUNCTIONS + CUDA_FUNCTIONS))
        for call in calls:
            arguments = call.arguments("cuda")
            with self.subTest(call=call.describe(arguments)):
                torch_result, torch_error = outcome(self.torch_module, call.function, arguments)
                fast_result, fast_error = outcome(self.fast_module, call.function, arguments)
                if call.raises is not None:
                    self.assertIsInstance(torch_error, call.raises)
                    self.assertIsInstance(fast_error, call.raises)
                    continue
                self.assertIsNone(torch_error, f"torch's build raised {torch_error!r}")
                self.assertIsNone(fast_error, f"the fast path raised {fast_error!r}")
                problem = same_result(fast_result, torch_result)
                self.assertIsNone(problem, f"the fast path differs from torch's build: {problem}")
                problem = same_result(torch_result, call.expected(*arguments), call.tolerance)
                self.assertIsNone(problem, f"torch's build differs from the Python computation: {problem}")


if __name__ == "__main__":
    unittest.main()
