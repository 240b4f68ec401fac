"""Unit test of the fast path's argument conversion, on the CPU: argument_types_extension's C++
functions (one per parameter type the fast path converts, and host functions that allocate a shape
computed from their arguments) are built through the fast path and called with several values
each; every result must be the one the same computation gives in Python, and every refused
argument the exception a stock module raises.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
import unittest
from typing import Any

from argument_types_extension import CPP_FUNCTIONS, CPP_SOURCE, cpu_calls, same_result
from fastpath_test_support import native_available

import torch.utils.cpp_extension as cpp_extension

import dicebench_fastpath


@unittest.skipUnless(native_available(), "dicebench_fastpath_native is not built")
class ArgumentConversionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.cache = tempfile.mkdtemp(prefix="dbfp-arguments-")
        cls.addClassCleanup(shutil.rmtree, cls.cache, ignore_errors=True)  # also when this setup fails
        lines: list[str] = []

        original = cpp_extension.load_inline

        @functools.wraps(original)  # the fast path binds arguments to torch's signature
        def refuse_torchs_toolchain(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the fast path fell back to torch's toolchain: " + "\n".join(lines))

        cpp_extension.load_inline = refuse_torchs_toolchain
        try:
            dicebench_fastpath.install("sm_90", cls.cache, lines.append)
            cls.module = cpp_extension.load_inline("argument_types", CPP_SOURCE, functions=CPP_FUNCTIONS)
            cls.records = dicebench_fastpath.compile_records()
        finally:
            dicebench_fastpath.uninstall()
            cpp_extension.load_inline = original

    def test_the_extension_is_built_on_the_fast_path(self) -> None:
        self.assertEqual([r["path"] for r in self.records], ["nvrtc"])
        for function in CPP_FUNCTIONS:
            self.assertTrue(callable(getattr(self.module, function)), function)

    def test_every_parameter_type_converts_as_in_python(self) -> None:
        calls = cpu_calls()
        self.assertEqual({c.function for c in calls}, set(CPP_FUNCTIONS))  # every function is called
        # Twice over: a conversion that reads freed memory can read what the allocator left there
        # (the right values, by chance) on one round and not the next.
        for round_ in range(2):
            for call in calls:
                arguments = call.arguments("cpu")
                with self.subTest(round=round_, call=call.describe(arguments)):
                    function = getattr(self.module, call.function)
                    if call.raises is not None:
                        with self.assertRaises(call.raises):
                            function(*arguments)
                        continue
                    got = function(*arguments)
                    problem = same_result(got, call.expected(*arguments), call.tolerance)
                    self.assertIsNone(problem, problem)

    def test_calls_count_what_got_past_the_argument_count(self) -> None:
        # A wrong count or keywords are refused before anything the fast path built runs (torch's
        # module refuses them alike), so they leave the count alone; a call that converts does not.
        call = next(c for c in cpu_calls() if c.raises is None)
        function = getattr(self.module, call.function)
        arguments = call.arguments("cpu")
        before = dicebench_fastpath.calls()
        with self.assertRaisesRegex(TypeError, "incompatible function arguments"):
            function(*arguments, 0)
        with self.assertRaisesRegex(TypeError, "keyword arguments are not accepted"):
            function(*arguments, extra=0)
        self.assertEqual(dicebench_fastpath.calls(), before)
        function(*arguments)
        self.assertEqual(dicebench_fastpath.calls(), before + 1)


if __name__ == "__main__":
    unittest.main()
