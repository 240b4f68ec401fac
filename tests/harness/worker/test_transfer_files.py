"""File transfers (raw_file) from an untrusted sender: the reader takes only a regular file inside
the job folder, never through a link, never a FIFO or a device (either would block or never end),
and only bytes that fit the descriptor; masked batches; a candidate's outputs written with sealed
calls; the device a CUDA memory pool allocates on."""

import os
import tempfile
import unittest

from dicebench_harness import transfer


class PlainFileTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="dicebench-transfer-")
        self.outside = tempfile.mkdtemp(prefix="dicebench-outside-")
        with open(os.path.join(self.outside, "secret"), "wb") as f:
            f.write(b"secret")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.folder, ignore_errors=True)
        shutil.rmtree(self.outside, ignore_errors=True)

    def refused(self, path, why):
        with self.assertRaises(transfer.TransferError) as caught:
            transfer.import_tree({"transport": "raw_file", "path": path, "tree": {"list": []}}, "cpu", clone=True,
                                 folder=self.folder)
        self.assertIn(why, str(caught.exception))

    def test_a_path_outside_the_job_folder_is_refused(self):
        self.refused(os.path.join(self.outside, "secret"), "not in the job folder")
        self.refused(os.path.join(self.folder, "..", os.path.basename(self.outside), "secret"), "not in the job folder")

    def test_links_fifos_and_devices_are_refused(self):
        link = os.path.join(self.folder, "outputs-0.pt")
        os.symlink(os.path.join(self.folder, "inside.pt"), link)
        with open(os.path.join(self.folder, "inside.pt"), "wb") as f:
            f.write(b"x")
        self.refused(link, "cannot open")
        fifo = os.path.join(self.folder, "outputs-1.pt")
        os.mkfifo(fifo)
        self.refused(fifo, "not a regular file")  # returns at once: opening does not wait for a writer
        self.refused("/dev/zero", "not in the job folder")


class MaskedBatchTest(unittest.TestCase):
    """A batch's inputs exported masked (transfer.BatchWriter, CPU files): the receiver with the call's
    key gets them back exactly, whatever their dtypes, strides and nesting; without it, not."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="dicebench-batch-")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.folder, ignore_errors=True)

    def inputs(self, seed):
        import torch

        torch.manual_seed(seed)
        wide = torch.randn(6, 5)
        return [wide.t(), (torch.randint(0, 9, (3,), dtype=torch.int64), [torch.randn(7).half(), 2.5]),
                torch.tensor(True), torch.empty(0, 4), torch.randn(4, 4)[:, 1], None, 3]

    def check_equal(self, got, expected):
        import torch

        if isinstance(expected, torch.Tensor):
            self.assertIsInstance(got, torch.Tensor)
            self.assertEqual((got.dtype, got.shape), (expected.dtype, expected.shape))
            self.assertTrue(torch.equal(got, expected))
        elif isinstance(expected, (list, tuple)):
            self.assertEqual((type(got), len(got)), (type(expected), len(expected)))
            for g, e in zip(got, expected):
                self.check_equal(g, e)
        else:
            self.assertEqual(got, expected)

    def test_masked_inputs_come_back_with_their_key_only(self):
        import torch

        calls = [self.inputs(seed) for seed in (1, 2, 3)]
        region = max(transfer.batch_region_bytes(x) for x in calls)
        writer = transfer.BatchWriter("cpu", len(calls), region)
        paths = [os.path.join(self.folder, f"inputs-{k}.pt") for k in range(3)]
        descriptors = [writer.write(k, x, 50 + k, path) for k, (x, path) in enumerate(zip(calls, paths))]
        for k, descriptor in enumerate(descriptors):
            self.check_equal(transfer.import_tree(descriptor, "cpu", clone=True, folder=self.folder, mask_key=50 + k), calls[k])
            raw = transfer.import_tree(descriptor, "cpu", clone=True, folder=self.folder)
            self.assertFalse(torch.equal(raw[0], calls[k][0]))
            other = transfer.import_tree(descriptor, "cpu", clone=True, folder=self.folder, mask_key=51 + k)
            self.assertFalse(torch.equal(other[0], calls[k][0]))
        with self.assertRaises(transfer.TransferError):
            transfer.import_tree(descriptors[0], "cpu", clone=False, folder=self.folder, mask_key=50)
        # Unmasked (a batch of one): the inputs as they are.
        plain = writer.write(0, calls[0], None, paths[0])
        self.check_equal(transfer.import_tree(plain, "cpu", clone=True, folder=self.folder), calls[0])

    def test_the_mask_is_the_same_stream_everywhere_and_differs_by_key_and_tensor(self):
        import torch

        first = transfer.mask_stream(7, 0, 1001, "cpu")
        self.assertEqual((first.dtype, first.numel()), (torch.uint8, 1001))
        self.assertTrue(torch.equal(first, transfer.mask_stream(7, 0, 1001, "cpu")))
        self.assertTrue(torch.equal(first[:10], transfer.mask_stream(7, 0, 10, "cpu")))
        for other in (transfer.mask_stream(8, 0, 1001, "cpu"), transfer.mask_stream(7, 1, 1001, "cpu")):
            self.assertLess(float((first == other).float().mean()), 0.05)
        self.assertGreater(len(torch.unique(first)), 200)  # every byte value, not a narrow range




class RawOutputsTest(unittest.TestCase):
    """A candidate's CPU outputs (transfer.export_tree: raw bytes, written with sealed calls) come
    back exactly, whatever their dtypes, strides and nesting; a descriptor that does not fit its
    file is refused."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="dicebench-raw-")
        self.path = os.path.join(self.folder, "outputs-0.pt")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.folder, ignore_errors=True)

    def test_round_trip(self):
        import torch

        value = (torch.randn(3, 4).t(), [torch.arange(6, dtype=torch.int64).reshape(2, 3)[:, 1:],
                                         torch.randn(5, dtype=torch.bfloat16), torch.tensor(True),
                                         torch.randn(2, dtype=torch.complex64), torch.empty(0, 3)],
                 7, 2.5, None)
        descriptor, keep = transfer.export_tree(value, "cpu", self.path)
        self.assertIsNone(keep)
        self.assertEqual(descriptor["transport"], "raw_file")
        back = transfer.import_tree(descriptor, "cpu", clone=False, folder=self.folder)
        self.assertIsInstance(back, tuple)
        self.assertEqual(back[2:], (7, 2.5, None))
        for sent, got in zip([value[0], *value[1]], [back[0], *back[1]]):
            self.assertEqual((got.dtype, got.shape), (sent.dtype, sent.shape))
            self.assertTrue(torch.equal(got, sent))

    def test_a_rewritten_file_holds_only_the_latest_outputs_and_is_cut_only_when_shorter(self):
        # A timing loop writes every call's outputs to one file: overwritten in place (truncating a
        # file that holds data costs a call about 0.15 ms on a disk mounted with discard), and cut
        # only where an earlier write ran longer.
        import torch
        from dicebench_harness import sealed

        cuts = []
        real = sealed._os_ftruncate
        sealed._os_ftruncate = lambda fd, size: cuts.append(size) or real(fd, size)
        try:
            for value, cut in ((torch.arange(100.0), []), (torch.arange(100.0) + 1, []), (torch.arange(3.0), [12])):
                cuts.clear()
                descriptor, _ = transfer.export_tree([value], "cpu", self.path)
                self.assertEqual(cuts, cut)
                self.assertEqual(os.path.getsize(self.path), value.numel() * 4)
                back = transfer.import_tree(descriptor, "cpu", clone=False, folder=self.folder)
                self.assertTrue(torch.equal(back[0], value))
        finally:
            sealed._os_ftruncate = real

    def test_a_descriptor_that_does_not_fit_its_file_is_refused(self):
        import torch

        descriptor, _ = transfer.export_tree([torch.ones(4)], "cpu", self.path)
        node = descriptor["tree"]["list"][0]["tensor"]
        for change, why in (({"size_bytes": 12}, "12 bytes for a float32 tensor"),
                            ({"offset_bytes": 8}, "run past the file"),
                            ({"dtype": "object"}, "unsupported dtype"),
                            ({"shape": [-4]}, "shape entry")):
            forged = {**descriptor, "tree": {"list": [{"tensor": {**node, **change}}]}}
            with self.assertRaises(transfer.TransferError) as caught:
                transfer.import_tree(forged, "cpu", clone=False, folder=self.folder)
            self.assertIn(why, str(caught.exception))
        with self.assertRaises(transfer.TransferError):
            transfer.import_tree({**descriptor, "path": "/etc/passwd"}, "cpu", clone=False, folder=self.folder)

    def test_a_patched_torch_does_not_reach_the_export(self):
        """The export reads the tensors it was given with calls bound before any patch."""
        import torch

        with PatchedTorch() as calls:
            descriptor, _ = transfer.export_tree([torch.ones(4)], "cpu", self.path)
        self.assertEqual(calls, [])
        back = transfer.import_tree(descriptor, "cpu", clone=False, folder=self.folder)
        self.assertTrue(torch.equal(back[0], torch.ones(4)))

    def test_a_patched_torch_does_not_reach_the_inputs_arrival(self):
        """What a candidate worker does between a call's inputs arriving and the call (import,
        unmask, fresh placement, numerics) calls nothing a candidate patched in torch."""
        import torch

        from dicebench_harness import numerics, placement

        inputs = [torch.randn(3, 5).t(), torch.arange(4)]
        writer = transfer.BatchWriter("cpu", 2, transfer.batch_region_bytes(inputs))
        descriptor = writer.write(0, inputs, 77, self.path)
        placements = placement.InputPlacements("cpu")
        with PatchedTorch() as calls:
            received = placements.receive(list(transfer.import_tree(descriptor, "cpu", clone=True, mask_key=77)), True)
            numerics.apply_numerics()
        self.assertEqual(calls, [])
        for got, sent in zip(received, inputs):
            self.assertTrue(torch.equal(got, sent))


class DispatchModeTest(unittest.TestCase):
    def test_outputs_are_refused_while_a_dispatch_mode_is_active(self):
        """A torch dispatch mode would see every operation the harness makes on the outputs."""
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        from dicebench_harness.candidate import check_plain_outputs

        class Watching(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        outputs = torch.ones(3)
        check_plain_outputs(outputs, "cpu")
        with Watching():
            with self.assertRaisesRegex(TypeError, "dispatch mode"):
                check_plain_outputs(outputs, "cpu")
        check_plain_outputs(outputs, "cpu")


class AllocatingFromTest(unittest.TestCase):
    def test_a_pool_on_cuda_without_an_index_is_the_current_devices(self):
        """torch.cuda.use_mem_pool refuses a device without an index ("Expected a torch.device with
        a specified index"); the harness's 'cuda' means the current device (seen on the GPU host)."""
        from unittest import mock

        import torch

        asked = []

        class Context:
            def __enter__(self):
                return None

            def __exit__(self, *exc):
                return None

        def use_mem_pool(pool, device=None):
            asked.append(device)
            return Context()

        with mock.patch.object(torch.cuda, "use_mem_pool", use_mem_pool):
            for device in ("cuda", "cuda:1"):
                with transfer.allocating_from(object(), device):
                    pass
            with transfer.allocating_from(None, "cuda"):
                pass
        self.assertEqual(asked, [None, 1])


class PatchedTorch:
    """Replaces torch functions and torch.Tensor methods a harness might call with spies that note
    their names (and then do their work), as a candidate could; restores them on exit."""

    FUNCTIONS = ("load", "save", "empty", "frombuffer", "as_tensor", "randint", "set_float32_matmul_precision",
                 "set_default_dtype", "set_grad_enabled")
    METHODS = ("numpy", "contiguous", "detach", "view", "clone", "copy_", "as_strided", "bitwise_xor_",
               "bitwise_not_", "untyped_storage", "set_", "reshape", "narrow", "__getitem__", "stride", "size")

    def __enter__(self):
        import torch

        self.calls: list = []
        self.saved = [(torch, name, getattr(torch, name)) for name in self.FUNCTIONS]
        self.saved += [(torch.Tensor, name, getattr(torch.Tensor, name)) for name in self.METHODS]
        for owner, name, original in self.saved:
            setattr(owner, name, self._spy(name, original))
        return self.calls

    def _spy(self, name, original):
        def patched(*args, **kwargs):
            self.calls.append(name)
            return original(*args, **kwargs)
        return patched

    def __exit__(self, *exc):
        for owner, name, original in self.saved:
            setattr(owner, name, original)


if __name__ == "__main__":
    unittest.main()
