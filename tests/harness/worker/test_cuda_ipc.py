"""CUDA IPC of the harness's transfers (harness/worker/cuda_ipc.hpp through dicebench_harness.transfer)
between two processes on a GPU (label gpu): tensors of every kind arrive intact, a handle open twice
maps once, nothing is written to /dev/shm (so the candidate's sandbox keeps a private one), and
hostile descriptors give TransferError without a sticky CUDA error; and the reference exports no
allocation that holds what it computes from (its own inputs) or compares with (its outputs); a batch
of timed calls travels in one masked allocation, opened once, and a timing loop with warm calls
runs on batches; inputs placed fresh lie at addresses no input of the job used, and their memory
goes back once they are gone. Exits 77
(skipped) where torch or a CUDA device is missing."""

import base64
import multiprocessing
import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

if torch is None or not torch.cuda.is_available():
    print("[skipped] torch with a visible CUDA device is needed")
    sys.exit(77)

import dicebench_cuda  # noqa: E402,F401  (after torch)
from dicebench_harness import placement, protocol, transfer  # noqa: E402
from dicebench_harness.reference import ReferenceRole  # noqa: E402


def sample_tree():
    """Deterministic tensors of several dtypes and layouts, several of them in one allocation."""
    g = torch.Generator(device="cuda").manual_seed(7)
    base = torch.randn(64, 48, device="cuda", generator=g)
    return [
        base,
        base.t(),  # non-contiguous: the same storage as base
        base[5:9, 3:],  # a storage offset
        torch.randn(33, device="cuda", generator=g).to(torch.bfloat16),
        torch.randn(7, 5, device="cuda", generator=g, dtype=torch.float64),
        torch.arange(10, device="cuda", dtype=torch.int64) % 3 == 0,
        torch.randn(4, device="cuda", generator=g, dtype=torch.complex64),
        torch.empty(0, 3, device="cuda"),
        (3, 2.5, None, [True]),
    ]


def sender(connection):
    """The other process: exports sample_tree(), sends the descriptor, keeps the export alive until
    told, then answers whether its memory still holds the values (the receiver wrote nothing)."""
    value = sample_tree()
    descriptor, keep = transfer.export_tree(value, "cuda:0", "")
    connection.send(descriptor)
    connection.recv()
    connection.send(bool(torch.equal(value[0], sample_tree()[0])))
    del keep
    connection.close()


def shm_entries():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


class CudaIpcTransferTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.context = multiprocessing.get_context("spawn")
        cls.shm_before = shm_entries()
        cls.parent, child = cls.context.Pipe()
        cls.process = cls.context.Process(target=sender, args=(child,))
        cls.process.start()
        cls.descriptor = cls.parent.recv()

    @classmethod
    def tearDownClass(cls):
        cls.parent.send("done")
        cls.intact = cls.parent.recv()
        cls.process.join(60)

    def test_every_kind_of_tensor_arrives_intact(self):
        received = transfer.import_tree(self.descriptor, torch.device("cuda:0"), clone=False)
        expected = sample_tree()
        for got, want in zip(received[:8], expected[:8]):
            self.assertEqual(got.dtype, want.dtype)
            self.assertEqual(got.shape, want.shape)
            self.assertEqual(got.stride(), want.stride())
            self.assertTrue(torch.equal(got, want))
        self.assertEqual(received[8], (3, 2.5, None, [True]))
        cloned = transfer.import_tree(self.descriptor, torch.device("cuda:0"), clone=True)
        self.assertTrue(torch.equal(cloned[1], expected[1]))

    def test_one_allocation_is_mapped_once_and_unmapped_after_its_last_tensor(self):
        tree = self.descriptor["tree"]["list"]
        handles = {node["tensor"]["handle"] for node in tree[:3]}
        self.assertEqual(len(handles), 1, "base, its transpose and its slice share one allocation")
        first = transfer.import_tree(self.descriptor, torch.device("cuda:0"), clone=False)
        second = transfer.import_tree(self.descriptor, torch.device("cuda:0"), clone=False)
        self.assertEqual(first[0].data_ptr(), second[0].data_ptr())
        del first, second
        again = transfer.import_tree(self.descriptor, torch.device("cuda:0"), clone=False)
        self.assertTrue(torch.equal(again[0], sample_tree()[0]))

    def test_nothing_is_written_to_dev_shm(self):
        transfer.import_tree(self.descriptor, torch.device("cuda:0"), clone=True)
        created = {e for e in shm_entries() - self.shm_before if e.startswith("torch_")}
        self.assertEqual(created, set())

    def refused(self, change, why):
        node = {**self.descriptor["tree"]["list"][0]["tensor"], **change}
        with self.assertRaises(transfer.TransferError) as caught:
            transfer.import_tree({"transport": "cuda_ipc", "tree": {"tensor": node}}, torch.device("cuda:0"), clone=False)
        self.assertIn(why, str(caught.exception))
        # No sticky error: the device still runs work.
        self.assertEqual(int(torch.ones(3, device="cuda").sum().item()), 3)

    def test_hostile_descriptors_are_refused(self):
        size = self.descriptor["tree"]["list"][0]["tensor"]["size_bytes"]
        self.refused({"size_bytes": 1 << 40}, "does not fit the shared allocation")
        self.refused({"offset_bytes": 4}, "not a multiple of")
        self.refused({"offset_bytes": 1 << 40}, "does not fit the shared allocation")
        self.refused({"shape": [64, 49]}, "do not fit")
        self.refused({"stride": [48, 1000]}, "do not fit")
        self.refused({"offset": size}, "do not fit")
        self.refused({"size_bytes": size - 2}, "a float32 storage of")
        self.refused({"handle": base64.b64encode(bytes(64)).decode()}, "cannot open shared")
        self.refused({"handle": base64.b64encode(os.urandom(64)).decode()}, "cannot open shared")
        self.refused({"handle": base64.b64encode(bytes(10)).decode()}, "64 bytes")
        self.refused({"handle": "not base64!"}, "not valid base64")
        self.refused({"device": 7}, "this worker uses 0")


def tearDownModule():
    # The sender saw its memory unchanged by every import (views were read, never written).
    assert CudaIpcTransferTest.intact, "the sender's memory changed"


REFERENCE_PROBLEM = """
import torch
class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = torch.nn.Linear(n, n)
    def forward(self, x, y):
        return torch.relu(self.linear(x)) + y
def get_inputs():
    return [torch.randn(256, 64), torch.randn(256, 64)]
def get_init_inputs():
    return [64]
"""


def storages(tree):
    """(first byte, size) of every tensor's storage in a (nested) list or tuple."""
    if isinstance(tree, torch.Tensor):
        storage = tree.untyped_storage()
        return [(storage.data_ptr(), storage.nbytes())]
    if isinstance(tree, (list, tuple)):
        return [item for value in tree for item in storages(value)]
    return []


class ReferenceExportTest(unittest.TestCase):
    def test_exported_allocations_hold_nothing_the_reference_judges_with(self):
        # A candidate may keep a trial's mapping of what the reference exported, and the allocator
        # may hand that memory out again: whatever lies in an exported allocation, trial after
        # trial, is the candidate's to write. The reference's own inputs and outputs never may.
        with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as private:
            role = ReferenceRole("cuda:0", private)
            prepared = role.prepare(protocol.validate_request({
                "type": "reference.prepare", "job": "j", "problem_source": REFERENCE_PROBLEM, "device": "cuda",
                "init_seed": 1, "work_dir": work}))
            self.assertTrue(prepared["ok"], prepared)
            for trial in range(4):
                ready = role.trial(protocol.validate_request(
                    {"type": "reference.trial", "job": "j", "trial": trial, "seed": 100 + trial}))
                self.assertTrue(ready["ok"], ready)
                state = role.jobs["j"]
                ranges = []
                for value in state.exported:
                    pointer = value.untyped_storage().data_ptr()
                    _, base, size = dicebench_cuda.ipc_export(pointer, 0)
                    ranges.append((base, base + size))
                self.assertEqual(len(ranges), 2)
                for pointer, nbytes in storages(state.inputs) + storages(state.outputs):
                    for low, high in ranges:
                        self.assertFalse(low <= pointer < high or low < pointer + nbytes <= high,
                                         f"trial {trial}: the reference's own memory lies in an exported allocation")
                # The candidate receives the same values the reference computed from.
                for mine, theirs in zip(state.inputs, state.exported):
                    self.assertTrue(torch.equal(mine, theirs))


BATCH_CALLS = 6


def plain(tree):
    """A tree's values as Python lists, with each tensor's dtype, shape and strides."""
    if isinstance(tree, torch.Tensor):
        return [str(tree.dtype), list(tree.shape), list(tree.stride()), tree.cpu().tolist()]
    if isinstance(tree, (list, tuple)):
        return [type(tree).__name__, [plain(item) for item in tree]]
    return tree


def masked_receiver(connection, descriptors, keys):
    """Receives each descriptor with its key: the plain values, and how many IPC opens it took."""
    opened = []
    real_init = transfer._Mapping.__init__

    def counting_init(self, handle, device_index):
        opened.append(handle)
        real_init(self, handle, device_index)

    transfer._Mapping.__init__ = counting_init
    received = [plain(transfer.import_tree(d, torch.device("cuda:0"), clone=True, mask_key=k))
                for d, k in zip(descriptors, keys)]
    connection.send((received, len(opened)))
    connection.close()


def batch_receiver(connection, descriptors):
    """The candidate's side of a batch: each call's inputs received with its key (and, to show the
    mask, its first tensor's raw bytes without it); how many IPC opens that took."""
    opened = []
    real_init = transfer._Mapping.__init__

    def counting_init(self, handle, device_index):
        opened.append(handle)
        real_init(self, handle, device_index)

    transfer._Mapping.__init__ = counting_init
    received, raw = [], []
    for k, descriptor in enumerate(descriptors):
        inputs = transfer.import_tree(descriptor, torch.device("cuda:0"), clone=True, mask_key=900 + k)
        received.append([x.cpu().tolist() for x in inputs])
        raw.append(transfer.import_tree(descriptor, torch.device("cuda:0"), clone=True)[0].cpu().tolist())
    connection.send((received, raw, len(opened)))
    connection.close()


def timing_candidate(connection, source, work, init_inputs):
    """A candidate worker's role in this process, its host (and reference) the test across a pipe."""
    from dicebench_harness.candidate import CandidateRole

    def host(message):
        connection.send(message)
        return connection.recv()

    role = CandidateRole("cuda:0", host=host)
    handlers = role.handlers()
    for request in ({"type": "candidate.load", "job": "t", "problem_source": REFERENCE_PROBLEM, "candidate_source": source,
                     "device": "cuda", "work_dir": work},
                    {"type": "candidate.init", "job": "t", "init_seed": 1, "init_inputs": init_inputs}):
        reply = handlers[request["type"]](protocol.validate_request(request))
        assert reply["ok"], reply
    request = protocol.validate_request(connection.recv())
    connection.send({"final": handlers["candidate.time"](request)})
    connection.close()


CORRECT_CANDIDATE = """
import torch
class ModelNew(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = torch.nn.Linear(n, n)
    def forward(self, x, y):
        return torch.relu(self.linear(x)) + y
"""


class BatchOnCudaTest(unittest.TestCase):
    """reference.batch on the GPU: one allocation per batch, masked per call; the candidate unmasks
    every call's inputs into its own memory with one IPC open for the batch; and a whole timing loop
    with warm calls runs on batches, every call compared."""

    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.private = tempfile.mkdtemp()
        self.role = ReferenceRole("cuda:0", self.private)
        prepared = self.role.prepare(protocol.validate_request({
            "type": "reference.prepare", "job": "j", "problem_source": REFERENCE_PROBLEM, "device": "cuda",
            "init_seed": 1, "work_dir": self.work}))
        self.assertTrue(prepared["ok"], prepared)
        self.init_inputs = prepared["init_inputs"]
        self.context = multiprocessing.get_context("spawn")

    def batch(self, first_call, count, outputs=lambda call: call % 3 == 0):
        made = self.role.batch(protocol.validate_request({
            "type": "reference.batch", "job": "j", "budget_bytes": 1 << 30,
            "calls": [{"trial": 100 + c, "seed": 700 + c, "outputs": outputs(c), "mask_key": 900 + c}
                      for c in range(first_call, first_call + count)]}))
        self.assertTrue(made["ok"], made)
        return protocol.validate_reply(made)

    def test_a_batch_is_one_masked_allocation_opened_once(self):
        made = self.batch(0, BATCH_CALLS)
        self.assertEqual((made["made"], made["masked"]), (BATCH_CALLS, True))
        handles = {node["tensor"]["handle"] for d in made["inputs"] for node in d["tree"]["list"]}
        self.assertEqual(len(handles), 1)
        state = self.role.jobs["j"]
        _, base, size = dicebench_cuda.ipc_export(state.exported.buffer.data_ptr(), 0)
        for outputs in state.batch_outputs.values():
            for pointer, nbytes in storages(outputs):
                self.assertFalse(base <= pointer < base + size, "a kept output lies in the exported allocation")
        expected = [[x.cpu().tolist() for x in self.role._make_inputs(state, 700 + k, None)] for k in range(BATCH_CALLS)]
        parent, child = self.context.Pipe()
        process = self.context.Process(target=batch_receiver, args=(child, made["inputs"]))
        process.start()
        received, raw, opens = parent.recv()
        process.join(60)
        self.assertEqual(received, expected)
        self.assertEqual(opens, 1)
        for k in range(BATCH_CALLS):
            self.assertNotEqual(raw[k], expected[k][0], k)

    def test_every_kind_of_tensor_travels_masked_in_a_batch(self):
        trees = [sample_tree(), [t * 2 if isinstance(t, torch.Tensor) and t.dtype != torch.bool else t
                                 for t in sample_tree()]]
        region = max(transfer.batch_region_bytes(tree) for tree in trees)
        writer = transfer.BatchWriter("cuda:0", 2, region, transfer.export_pool("cuda:0"))
        descriptors = [writer.write(k, tree, 55 + k, "") for k, tree in enumerate(trees)]
        parent, child = self.context.Pipe()
        process = self.context.Process(target=masked_receiver, args=(child, descriptors, [55, 56]))
        process.start()
        received, opens = parent.recv()
        process.join(60)
        self.assertEqual(opens, 1)
        for got, tree in zip(received, trees):
            expected = plain(tree)
            # Values and shapes as sent; strides of the compact copies (a slice becomes contiguous).
            for g, e in zip(got[1], expected[1]):
                if isinstance(e, list) and len(e) == 4 and isinstance(e[0], str) and e[0].startswith("torch."):
                    self.assertEqual((g[0], g[1], g[3]), (e[0], e[1], e[3]))
                else:
                    self.assertEqual(g, e)

    def test_a_timing_loop_with_warm_calls_runs_on_batches(self):
        parent, child = self.context.Pipe()
        process = self.context.Process(target=timing_candidate, args=(child, CORRECT_CANDIDATE, self.work, self.init_inputs))
        process.start()
        ready = []

        def hand(call):
            if not ready:
                made = self.batch(call, 4, outputs=lambda c: True)
                ready.extend((call + k, d) for k, d in enumerate(made["inputs"]))
            index, descriptor = ready.pop(0)
            self.assertEqual(index, call)
            return {"inputs": descriptor, "mask_key": 900 + call}

        parent.send({"type": "candidate.time", "job": "t", "outputs_path": os.path.join(self.work, "o.pt"),
                     "warmup": 2, "min_trials": 6, "max_trials": 12, "budget_s": 20.0, "warm_calls": True, **hand(0)})
        verdicts = []
        while True:
            message = parent.recv()
            if "final" in message:
                final = message["final"]
                break
            self.assertEqual(message["type"], "candidate.call_done")
            compared = self.role.compare(protocol.validate_request({
                "type": "reference.compare", "job": "j", "trial": 100 + message["call"], "outputs": message["outputs"]}))
            verdicts.append(compared["verdict"])
            if not message["more"]:
                parent.send({"type": "timing.stop", "job": "t"})
            else:
                parent.send({"type": "timing.next", "job": "t", "call": message["call"] + 1, **hand(message["call"] + 1)})
        process.join(60)
        self.assertTrue(final["ok"], final)
        timing = final["timing"]
        self.assertEqual(timing["timer"], "cupti_runtime")
        self.assertEqual(timing["warm_calls"], timing["trials"])
        self.assertEqual(final["calls"], 2 + timing["trials"] + timing["warm_calls"])
        self.assertEqual(verdicts, ["correct"] * final["calls"])
        self.assertIsNotNone(final["profile"])


class FreshPlacementOnCudaTest(unittest.TestCase):
    def test_fresh_inputs_lie_at_unused_addresses_and_their_memory_is_released(self):
        places = placement.InputPlacements("cuda:0")
        earlier = []
        for call in range(8):
            g = torch.Generator(device="cuda").manual_seed(call)
            inputs = [torch.randn(1024, 1024, device="cuda", generator=g), [torch.arange(7, device="cuda").to(torch.bfloat16)]]
            expected = [inputs[0].clone(), inputs[1][0].clone()]
            first = inputs[0]
            got = places.receive(inputs, call % 2 == 1)
            if call % 2 == 1:  # the copy the inputs came in is scrambled
                self.assertFalse(torch.equal(first, expected[0]))
            spans = [(t.untyped_storage().data_ptr(), t.untyped_storage().data_ptr() + t.untyped_storage().nbytes())
                     for t in (got[0], got[1][0])]
            overlapping = any(a < e and s < b for a, b in spans for s, e in earlier)
            if call % 2 == 1:
                self.assertFalse(overlapping, (call, spans))
            self.assertTrue(torch.equal(got[0], expected[0]))
            self.assertTrue(torch.equal(got[1][0], expected[1]))
            self.assertEqual(got[1][0].dtype, torch.bfloat16)
            earlier += spans
            del got, inputs, expected, first
        # The last fresh call's regions wait to be unmapped: torch let them go with their tensors
        # (the earlier ones were unmapped at the calls after them).
        self.assertEqual(len(places.released), 2)
        places.release()
        self.assertEqual(places.released, [])
        self.assertEqual(places.fresh_calls, 4)


if __name__ == "__main__":
    unittest.main()
