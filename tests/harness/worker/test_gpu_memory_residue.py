"""GPU memory between jobs (label gpu; harness/README.md, "GPU memory between jobs"): what a later
job's candidate can reach of an earlier job's data on the same GPU. Exits 77 (skipped) where torch or
a CUDA device is missing.

The leak this catches: one long-lived reference worker serves job 1 (256 MiB of recognisable inputs)
and then job 2 (8 MiB). The reference exports inputs from its export pool, which keeps its segments
through torch.cuda.empty_cache, so job 2's inputs are carved out of the segment that held job 1's; an
IPC handle maps the whole allocation (cudaIpcOpenMemHandle: the whole segment, not the tensor's
range), so job 2's candidate could read about 248 MiB of job 1's inputs beyond its own. Were the
segment given back instead, job 2's export is a new one of 20 MiB (torch's size for an 8 MiB
request), whose memory the driver may hand this same process back as job 1 left it. Without
scrub.release_cached in reference.release (the code before this test) either way leaves job 1's
bytes in job 2's mapping; with it, every block no tensor holds is zeroed before the cache is
emptied. The other tests: a CUDA candidate worker asked to end zeroes all it holds (shutdown.done),
freed blocks read back as zeros after zero_free_blocks (the default pool and a MemPool), and
dicebench_cuda's zero_ranges and mapped_fresh on a fresh placement."""

import base64
import os
import shutil
import sys
import tempfile
import textwrap
import unittest

try:
    import torch
except ImportError:
    torch = None

if torch is None or not torch.cuda.is_available():
    print("[skipped] torch with a visible CUDA device is needed")
    sys.exit(77)

import dicebench_cuda  # noqa: E402  (after torch)
from dicebench_harness import scrub, transfer  # noqa: E402
from dicebench_harness.client import WorkerProcess  # noqa: E402
from dicebench_harness.tensors import save_private  # noqa: E402

# The probe's problem (one input of a repeated 8-byte word, returned copied), its marks (8-byte
# words no allocator, kernel or zero fill writes by chance) and its count of them in device memory.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools", "perf"))
from gpu_memory_residue import MARK as JOB1_MARK, SMALL_MARK as JOB2_MARK, MiB  # noqa: E402
from gpu_memory_residue import count_mark, problem as filled_problem  # noqa: E402


class _DeviceBytes:
    def __init__(self, pointer: int, size: int):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (pointer, False),
                                         "version": 3, "stream": None}


def device_bytes(pointer: int, size: int) -> "torch.Tensor":
    return torch.as_tensor(_DeviceBytes(pointer, size), device="cuda")


class ReferenceExportPoolTest(unittest.TestCase):
    """This process is job 2's candidate: it maps job 2's handle as it comes and scans all of it."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="dicebench-residue-")
        os.chmod(self.dir, 0o700)
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.reference = WorkerProcess("reference", device="cuda", log_path=os.path.join(self.dir, "reference.log"))
        self.addCleanup(self.reference.close)

    def job(self, name: str, source: str, seed: int) -> dict:
        work = os.path.join(self.dir, name)
        os.mkdir(work, 0o700)
        prepared = self.reference.request({"type": "reference.prepare", "job": name, "problem_source": source,
                                           "device": "cuda", "init_seed": 1, "work_dir": work})
        self.assertTrue(prepared["ok"], prepared)
        ready = self.reference.request({"type": "reference.trial", "job": name, "trial": 0, "seed": seed})
        self.assertTrue(ready["ok"], ready)
        return ready

    def test_a_later_jobs_candidate_finds_none_of_an_earlier_jobs_inputs(self):
        self.job("job1", filled_problem(JOB1_MARK, 256 * MiB), 11)
        self.assertEqual(self.reference.request({"type": "reference.release", "job": "job1"})["type"],
                         "reference.released")
        ready = self.job("job2", filled_problem(JOB2_MARK, 8 * MiB), 12)
        node = ready["inputs"]["tree"]["list"][0]["tensor"]
        handle = base64.b64decode(node["handle"])
        base, size = dicebench_cuda.ipc_open(handle, torch.cuda.current_device())
        try:
            mapping = device_bytes(base, size)
            own, earlier = count_mark(mapping, JOB2_MARK), count_mark(mapping, JOB1_MARK)
            del mapping
        finally:
            dicebench_cuda.ipc_close(base, torch.cuda.current_device())
        where = f"job 2's handle maps {size / MiB:.0f} MiB"
        self.assertGreaterEqual(own, 8 * MiB, f"{where}: the scan must find job 2's own inputs")
        self.assertEqual(earlier, 0, f"{where}, {earlier / MiB:.1f} MiB of it job 1's inputs")
        # The reference ends zeroing what it holds (job 2's export and model among it).
        answer = self.reference.request({"type": "shutdown"})
        self.assertEqual((answer["type"], answer["message"]), ("shutdown.done", ""))
        self.assertGreaterEqual(answer["zeroed_bytes"], 8 * MiB)
        self.assertEqual(self.reference.process.wait(60), 0)


HOLDS_MEMORY = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = torch.full(({words},), {mark}, dtype=torch.int64, device="cuda")

        def forward(self, x):
            return x.clone()
''')


class CandidateShutdownTest(unittest.TestCase):
    def test_a_cuda_candidate_worker_zeroes_all_it_holds_when_asked_to_end(self):
        folder = tempfile.mkdtemp(prefix="dicebench-residue-")
        self.addCleanup(shutil.rmtree, folder, True)
        os.chmod(folder, 0o700)
        init_inputs = os.path.join(folder, "init_inputs.pt")
        save_private([], init_inputs)
        source = HOLDS_MEMORY.format(words=64 * MiB // 8, mark=JOB1_MARK)
        with WorkerProcess("candidate", device="cuda", log_path=os.path.join(folder, "candidate.log")) as candidate:
            loaded = candidate.request({"type": "candidate.load", "job": "c1", "device": "cuda", "work_dir": folder,
                                        "problem_source": filled_problem(JOB2_MARK, MiB), "candidate_source": source})
            self.assertTrue(loaded["ok"], loaded)
            ready = candidate.request({"type": "candidate.init", "job": "c1", "init_seed": 1,
                                       "init_inputs": init_inputs})
            self.assertTrue(ready["ok"], ready)
            answer = candidate.request({"type": "shutdown", "job": "c1"})
            self.assertEqual((answer["type"], answer["job"], answer["message"]), ("shutdown.done", "c1", ""))
            self.assertGreaterEqual(answer["zeroed_bytes"], 64 * MiB)
            self.assertEqual(candidate.process.wait(60), 0)


class InProcessTest(unittest.TestCase):
    def test_freed_blocks_read_back_as_zeros_after_zero_free_blocks(self):
        scrub.release_cached("cuda")  # no free block of this process's earlier work for the allocator to pick
        pool = torch.cuda.MemPool()
        for name, allocating in (("default pool", transfer.allocating_from(None, "cuda")),
                                 ("a MemPool", transfer.allocating_from(pool, "cuda"))):
            with self.subTest(name):
                with allocating:
                    filled = torch.full((32 * MiB // 8,), JOB1_MARK, dtype=torch.int64, device="cuda")
                    address = filled.data_ptr()
                    del filled
                self.assertGreaterEqual(scrub.zero_free_blocks("cuda", [pool]), 32 * MiB)
                with transfer.allocating_from(pool if name == "a MemPool" else None, "cuda"):
                    again = torch.empty(32 * MiB, dtype=torch.uint8, device="cuda")
                self.assertEqual(again.data_ptr(), address, "the allocator hands the freed block out again")
                self.assertEqual(count_mark(again, JOB1_MARK), 0)
                del again
        scrub.release_cached("cuda", [pool])

    def test_zero_ranges_and_mapped_fresh(self):
        index = torch.cuda.current_device()
        address, size, handle = dicebench_cuda.map_fresh(index, 4 * MiB, [])
        self.assertIn((address, size), dicebench_cuda.mapped_fresh())
        region = device_bytes(address, size)
        region.view(torch.int64).fill_(JOB1_MARK)
        torch.cuda.synchronize()
        self.assertEqual(dicebench_cuda.zero_ranges([(address, size)], index, torch.cuda.current_stream().cuda_stream),
                         size)
        self.assertEqual(int(region.count_nonzero().item()), 0)
        del region
        dicebench_cuda.unmap_fresh(address, size, handle, index)
        self.assertNotIn((address, size), dicebench_cuda.mapped_fresh())


if __name__ == "__main__":
    unittest.main()
