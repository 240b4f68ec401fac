"""GPU tests of the fast path: every test candidate built by torch's own load_inline and by the
fast path gives identical outputs on the same inputs, and takes the path its header expects.

Each side runs in its own process (run_candidate.py); torch's builds run in parallel, since each
takes about a minute. Skips itself where no GPU is visible. Prints compile times side by side.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from fastpath_test_support import HERE, candidate_header, candidate_paths, cudnn_in_toolkit, flatten, native_available

import torch


def runnable(path: str) -> bool:
    """False for a candidate that requires cuDNN where torch's build (CUDA_HOME's include folder) or
    the fast path (the toolkit's folders) has no cudnn.h: torch's build of it could not compile."""
    if candidate_header(path).get("requires") != "cudnn":
        return True
    from torch.utils import cpp_extension
    import dicebench_fastpath_native

    torch_has = any(os.path.exists(os.path.join(p, "cudnn.h")) for p in cpp_extension.include_paths("cuda"))
    return torch_has and cudnn_in_toolkit(dicebench_fastpath_native.default_toolchain())


def run(path: str, mode: str, out_dir: str, cache_dir: str) -> tuple[str, str]:
    name = os.path.basename(path)[:-3]
    output = os.path.join(out_dir, f"{name}-{mode}.pt")
    env = dict(os.environ)
    env["TORCH_EXTENSIONS_DIR"] = os.path.join(out_dir, f"torch-extensions-{name}-{mode}")
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    process = subprocess.run([sys.executable, os.path.join(HERE, "run_candidate.py"), path, mode, output, cache_dir],
                             env=env, capture_output=True, text=True, timeout=1500)
    log = process.stdout + process.stderr
    if process.returncode != 0:
        return "", log
    return output, log


@unittest.skipUnless(torch.cuda.is_available(), "no GPU visible")
@unittest.skipUnless(native_available(), "dicebench_fastpath_native is not built")
class FastPathMatchesTorchOnTheGpu(unittest.TestCase):
    results: dict = {}

    @classmethod
    def setUpClass(cls) -> None:
        cls.work = tempfile.mkdtemp(prefix="dbfp-gpu-")
        cache = os.path.join(cls.work, "cache")
        paths = [p for p in candidate_paths() if runnable(p)]
        # First the fast path's runs, one at a time on a quiet machine (their compile times are the
        # ones reported); then torch's builds in parallel, with the fast runs that fall back (and
        # so build with torch's toolchain too).
        quiet = [p for p in paths if candidate_header(p)["expect"] == "nvrtc"]
        fast = {p: run(p, "fast", cls.work, cache) for p in quiet}
        workers = max(2, min(len(paths), (os.cpu_count() or 2) // 2))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            stock = {p: pool.submit(run, p, "stock", cls.work, cache) for p in paths}
            falling_back = {p: pool.submit(run, p, "fast", cls.work, cache) for p in paths if p not in quiet}
            fast.update({p: f.result() for p, f in falling_back.items()})
            cls.results = {p: (stock[p].result(), fast[p]) for p in paths}
        print(f"\n{'candidate':<22} {'torch s':>8} {'fast s':>8}  path", file=sys.stderr)
        for p, ((stock_out, _), (fast_out, _)) in cls.results.items():
            if stock_out and fast_out:
                s, f = torch.load(stock_out), torch.load(fast_out)
                path = f["records"][0]["path"] if f["records"] else "?"
                print(f"{os.path.basename(p)[:-3]:<22} {s['compile_seconds']:8.2f} {f['compile_seconds']:8.2f}  {path}",
                      file=sys.stderr)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.work, ignore_errors=True)

    def check_candidate(self, path: str) -> None:
        if path not in self.results:
            self.skipTest("requires cuDNN headers and library in the CUDA toolkit's folders")
        header = candidate_header(path)
        (stock_out, stock_log), (fast_out, fast_log) = self.results[path]
        self.assertTrue(stock_out, f"torch's build or run failed:\n{stock_log[-3000:]}")
        self.assertTrue(fast_out, f"the fast path's run failed:\n{fast_log[-3000:]}")
        stock, fast = torch.load(stock_out), torch.load(fast_out)
        self.assertTrue(fast["records"], "no compile record")
        for record in fast["records"]:
            self.assertEqual(record["path"], header["expect"], record["reason"])
            if header["expect"] == "fallback":
                self.assertIn(header["reason"], record["reason"])
        for stock_run, fast_run in zip(stock["runs"], fast["runs"]):
            self.assertEqual(type(stock_run), type(fast_run))
            a, b = flatten(stock_run), flatten(fast_run)
            self.assertEqual(len(a), len(b))
            for x, y in zip(a, b):
                if isinstance(x, torch.Tensor):
                    self.assertEqual((x.dtype, x.shape), (y.dtype, y.shape))
                    same = torch.equal(x, y) or bool(torch.all((x == y) | (x.isnan() & y.isnan())))
                    diff = (x.double() - y.double()).abs().max().item() if x.numel() else 0.0
                    self.assertTrue(same, f"outputs differ (max abs diff {diff})")
                else:
                    self.assertEqual(x, y)


def _add_tests() -> None:
    for path in candidate_paths():
        name = os.path.basename(path)[:-3]

        def test(self: FastPathMatchesTorchOnTheGpu, path: str = path) -> None:
            self.check_candidate(path)

        test.__name__ = f"test_{name}"
        setattr(FastPathMatchesTorchOnTheGpu, test.__name__, test)


_add_tests()

if __name__ == "__main__":
    unittest.main()
