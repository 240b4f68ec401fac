"""scrub.py without a GPU: which ranges are zeroed from torch's allocator snapshot (free blocks of every
pool for release_cached, whole segments and the fresh placements for zero_everything), in which order
with the device synchronize and torch's empty_cache, and nothing at all off CUDA; a range never runs
from one allocation into the next (the stand-in refuses it as the driver does). Torch's calls and
dicebench_cuda are stand-ins recording what they are asked."""

import sys
import types
import unittest
from unittest import mock

from dicebench_harness import scrub

MiB = 1 << 20
SEGMENTS = [  # as torch.cuda.memory_snapshot() gives them (the fields scrub reads)
    {"device": 0, "address": 0x10000000, "total_size": 6 * MiB, "blocks": [
        {"address": 0x10000000, "size": 2 * MiB, "state": "active_allocated"},
        {"address": 0x10200000, "size": 1 * MiB, "state": "inactive"},
        {"address": 0x10300000, "size": 1 * MiB, "state": "active_awaiting_free"},
        {"address": 0x10400000, "size": 2 * MiB, "state": "active_allocated"}]},
    {"device": 0, "address": 0x20000000, "total_size": 2 * MiB, "blocks": [
        {"address": 0x20000000, "size": 2 * MiB, "state": "inactive"}]},
    # right after the one before, and free: another allocation all the same (never joined with it)
    {"device": 0, "address": 0x20200000, "total_size": 2 * MiB, "blocks": [
        {"address": 0x20200000, "size": 1 * MiB, "state": "inactive"},
        {"address": 0x20300000, "size": 1 * MiB, "state": "inactive"}]},
    {"device": 1, "address": 0x30000000, "total_size": 2 * MiB, "blocks": [
        {"address": 0x30000000, "size": 2 * MiB, "state": "inactive"}]},
]
POOL_SEGMENT = {"device": 0, "address": 0x40000000, "total_size": 256 * MiB, "blocks": [
    {"address": 0x40000000, "size": 8 * MiB, "state": "active_allocated"},
    {"address": 0x40800000, "size": 248 * MiB, "state": "inactive"}]}
FRESH = [(0x60000000, 2 * MiB)]


class PlanningTest(unittest.TestCase):
    def test_free_ranges_are_every_block_no_tensor_holds_on_the_device(self):
        self.assertEqual(scrub.free_ranges(SEGMENTS, 0),
                         [(0x10200000, 2 * MiB), (0x20000000, 2 * MiB), (0x20200000, 2 * MiB)])
        self.assertEqual(scrub.free_ranges(SEGMENTS, 1), [(0x30000000, 2 * MiB)])
        self.assertEqual(scrub.free_ranges(SEGMENTS, 2), [])

    def test_segment_ranges_are_whole_segments(self):
        self.assertEqual(scrub.segment_ranges(SEGMENTS, 0),
                         [(0x10000000, 6 * MiB), (0x20000000, 2 * MiB), (0x20200000, 2 * MiB)])

    def test_merged_joins_adjacent_and_overlapping_ranges_and_drops_empty_ones(self):
        self.assertEqual(scrub.merged([(300, 10), (100, 50), (150, 25), (160, 5), (400, 0), (170, 40)]),
                         [(100, 110), (300, 10)])
        self.assertEqual(scrub.merged([]), [])


class FakeCuda:
    """torch's calls and dicebench_cuda as scrub uses them, recording the calls in order."""

    def __init__(self, pool_in_default_snapshot: bool):
        self.calls: list = []
        self.default = SEGMENTS + ([POOL_SEGMENT] if pool_in_default_snapshot else [])
        self.module = types.ModuleType("dicebench_cuda")
        self.module.zero_ranges = self.zero_ranges
        self.module.mapped_fresh = lambda: list(FRESH)

    def snapshot(self, arguments):
        self.calls.append(("snapshot", arguments))
        pool = arguments[:2]
        return {"segments": self.default if pool == (0, 0) else [POOL_SEGMENT] if pool == (7, 1) else []}

    def zero_ranges(self, ranges, device, stream=0):
        self.calls.append(("zero", list(ranges), device, stream))
        # As the driver does: a memset must lie within one allocation (a segment or a placement).
        allocations = [(s["address"], s["total_size"]) for s in SEGMENTS + [POOL_SEGMENT]] + FRESH
        for address, size in ranges:
            if not any(start <= address and address + size <= start + length for start, length in allocations):
                raise RuntimeError(f"dicebench_cuda: cudaMemsetAsync: cudaErrorInvalidValue ({address:#x}, {size})")
        return sum(size for _, size in ranges)

    def patches(self):
        return [mock.patch.object(scrub, "_snapshot", self.snapshot),
                mock.patch.object(scrub, "_is_initialized", lambda: True),
                mock.patch.object(scrub, "_current_device", lambda: 0),
                mock.patch.object(scrub, "_synchronize", lambda: self.calls.append(("synchronize",))),
                mock.patch.object(scrub, "_empty_cache", lambda: self.calls.append(("empty_cache",))),
                mock.patch.dict(sys.modules, {"dicebench_cuda": self.module})]

    def __enter__(self):
        self.active = self.patches()
        for patch in self.active:
            patch.start()
        return self

    def __exit__(self, *exc):
        for patch in reversed(self.active):
            patch.stop()


class Pool:
    id = (7, 1)


class ClearingTest(unittest.TestCase):
    def test_release_cached_zeroes_every_pools_free_blocks_before_emptying_the_cache(self):
        for in_default in (True, False):  # a torch whose default snapshot leaves the private pools out too
            with self.subTest(pool_in_default_snapshot=in_default), FakeCuda(in_default) as cuda:
                zeroed = scrub.release_cached("cuda", [Pool(), None])
                kinds = [call[0] for call in cuda.calls]
                self.assertEqual(kinds[0], "synchronize")
                self.assertEqual(kinds[-2:], ["zero", "empty_cache"])
                zero = cuda.calls[-2]
                self.assertEqual(zero[1], [(0x10200000, 2 * MiB), (0x20000000, 2 * MiB), (0x20200000, 2 * MiB),
                                           (0x40800000, 248 * MiB)])
                self.assertEqual(zero[2:], (0, 0))
                self.assertEqual(zeroed, 254 * MiB)
                self.assertIn(("snapshot", (7, 1, False)), cuda.calls, "the pool's own snapshot is read")

    def test_zero_everything_zeroes_whole_segments_and_the_fresh_placements(self):
        with FakeCuda(True) as cuda:
            zeroed = scrub.zero_everything("cuda:0")
            self.assertEqual([call[0] for call in cuda.calls if call[0] != "snapshot"], ["synchronize", "zero"])
            self.assertEqual(cuda.calls[-1][1], [(0x10000000, 6 * MiB), (0x20000000, 2 * MiB), (0x20200000, 2 * MiB),
                                                 (0x40000000, 256 * MiB), (0x60000000, 2 * MiB)])
            self.assertEqual(zeroed, 268 * MiB)

    def test_the_device_index_picks_the_segments(self):
        with FakeCuda(False) as cuda:
            scrub.zero_free_blocks("cuda:1")
            self.assertEqual(cuda.calls[-1][1:3], ([(0x30000000, 2 * MiB)], 1))

    def test_nothing_is_done_off_cuda_or_before_cuda_started(self):
        with FakeCuda(True) as cuda:
            for device in ("cpu", "meta"):
                self.assertEqual(scrub.release_cached(device), 0)
                self.assertEqual(scrub.zero_everything(device), 0)
            with mock.patch.object(scrub, "_is_initialized", lambda: False):
                self.assertEqual(scrub.release_cached("cuda"), 0)
                self.assertEqual(scrub.zero_everything("cuda"), 0)
            self.assertEqual(cuda.calls, [])

    def test_no_free_block_no_zeroing_call(self):
        with FakeCuda(False) as cuda:
            cuda.default = [SEGMENTS[0] | {"blocks": [SEGMENTS[0]["blocks"][0]]}]
            self.assertEqual(scrub.release_cached("cuda"), 0)
            self.assertEqual([call[0] for call in cuda.calls if call[0] != "snapshot"], ["synchronize", "empty_cache"])


class BindingTest(unittest.TestCase):
    """The stand-ins above replace scrub's bindings; this checks the bindings themselves, against the
    torch installed here. (torch 2.11 has no torch._C._cuda_isInitialized: bound with a default of
    None, it made every clearing call a silent no-op on the GPU host, which only a GPU run showed.)"""

    def test_a_torch_built_with_cuda_gives_scrub_every_call_it_needs(self):
        import torch

        if not torch.backends.cuda.is_built():
            self.skipTest("this torch is built without CUDA: scrub binds nothing, and does nothing")
        self.assertIs(scrub._snapshot, torch._C._cuda_memorySnapshot)
        self.assertIs(scrub._empty_cache, torch._C._cuda_emptyCache)
        self.assertIs(scrub._synchronize, torch._C._cuda_synchronize)
        self.assertIs(scrub._current_device, torch._C._cuda_getDevice)
        self.assertIs(scrub._is_initialized, torch.cuda.is_initialized)

    def test_with_cuda_started_the_device_index_is_found(self):
        with mock.patch.object(scrub, "_is_initialized", lambda: True), \
                mock.patch.object(scrub, "_current_device", lambda: 3):
            self.assertEqual(scrub._device_index("cuda"), 3)
            self.assertEqual(scrub._device_index("cuda:1"), 1)
        self.assertIsNone(scrub._device_index("cpu"))


if __name__ == "__main__":
    unittest.main()
