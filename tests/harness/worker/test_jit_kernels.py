"""The watch on Triton's compile step (jit_kernels.JitWatch), against a stand-in for Triton's
JITFunction: each compile names its kernel and function as the candidate's, times it, and the
watch is installed only when the candidate imported Triton. (On a GPU, test_eval_gpu runs it on
real Triton kernels.)"""

import sys
import types
import unittest

from dicebench_harness import jit_kernels


class _Compiled:
    def __init__(self, name):
        self.name = name


class _JITFunction:
    def __init__(self, fn):
        self.fn = fn

    def _do_compile(self, key, signature, device, constexprs, options, attrs, warmup):
        return _Compiled(self.fn.__name__)


def relu_kernel():
    pass


class JitWatchTest(unittest.TestCase):
    def setUp(self):
        self.saved = {name: sys.modules.get(name) for name in ("triton", "triton.runtime", "triton.runtime.jit")}
        self.original = _JITFunction._do_compile

    def tearDown(self):
        _JITFunction._do_compile = self.original
        for name, module in self.saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module

    def fake_triton(self):
        jit = types.ModuleType("triton.runtime.jit")
        jit.JITFunction = _JITFunction
        sys.modules["triton"] = types.ModuleType("triton")
        sys.modules["triton.runtime"] = types.ModuleType("triton.runtime")
        sys.modules["triton.runtime.jit"] = jit

    def test_each_compile_names_the_candidates_kernel_and_is_timed(self):
        self.fake_triton()
        names = {"from_load_inline"}
        watch = jit_kernels.JitWatch(names)
        watch.install()
        watch.install()  # idempotent: one wrapper, one record per compile
        kernel = _JITFunction(relu_kernel)._do_compile("key", {}, 0, {}, None, [{}], False)
        self.assertEqual(kernel.name, "relu_kernel")
        self.assertEqual(names, {"from_load_inline", "relu_kernel"})
        summary = watch.summary()
        self.assertEqual(summary["count"], 1)
        self.assertEqual(summary["compiles"][0]["name"], "relu_kernel")
        self.assertGreaterEqual(summary["seconds"], 0.0)

    def test_nothing_is_installed_when_the_candidate_did_not_import_triton(self):
        for name in self.saved:
            sys.modules.pop(name, None)
        watch = jit_kernels.JitWatch(set())
        watch.install()
        self.assertFalse(watch.installed)
        self.assertNotIn("triton", sys.modules)  # the watch never imports it itself
        self.assertEqual(watch.summary(), {"count": 0, "seconds": 0.0, "compiles": []})


if __name__ == "__main__":
    unittest.main()
