"""Fresh placement of a call's inputs (dicebench_harness.placement) on the CPU: a fresh call's
tensors lie where no input of the job has been, with the same values, structure and layout, and
the copies they were received into are scrambled; other
calls keep the addresses the allocator gave them (which repeat: the reason placement exists). The
CUDA placement (dicebench_cuda.map_fresh) is tested in test_cuda_ipc.py."""

import unittest

import torch

from dicebench_harness import placement


def spans(tree, found):
    if isinstance(tree, torch.Tensor):
        storage = tree.untyped_storage()
        found.append((storage.data_ptr(), storage.data_ptr() + storage.nbytes()))
    elif isinstance(tree, (list, tuple)):
        for item in tree:
            spans(item, found)
    return found


def overlaps(span, earlier):
    return any(span[0] < end and start < span[1] for start, end in earlier)


def received(seed):
    """A call's inputs as the transfer hands them over: fresh copies, the previous call's freed."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(64, 64, generator=g), (torch.randint(0, 9, (33,), generator=g), 2.5), [torch.ones(5).t()]]


class PlacementTest(unittest.TestCase):
    def run_calls(self, fresh_calls, count=12):
        places = placement.InputPlacements("cpu")
        earlier, fresh_overlapped, other_overlapped = [], [], []
        for call in range(count):
            inputs = received(call)
            expected = [inputs[0].clone(), (inputs[1][0].clone(), inputs[1][1]), [inputs[2][0].clone()]]
            received_first = inputs[0]
            got = places.receive(inputs, call in fresh_calls)
            if call in fresh_calls:  # the copy it came in is scrambled: a replay reading there reads no input
                self.assertFalse(torch.equal(received_first, expected[0]))
            self.assertEqual(type(got[1]), tuple)
            self.assertEqual(got[1][1], 2.5)
            torch.testing.assert_close(got[0], expected[0], rtol=0, atol=0)
            torch.testing.assert_close(got[1][0], expected[1][0], rtol=0, atol=0)
            torch.testing.assert_close(got[2][0], expected[2][0], rtol=0, atol=0)
            self.assertEqual(got[0].stride(), expected[0].stride())
            now = spans(got, [])
            (fresh_overlapped if call in fresh_calls else other_overlapped).append(any(overlaps(s, earlier) for s in now))
            earlier += now
            del got, inputs, received_first  # the call is over: its inputs go back to the allocator
        return places, fresh_overlapped, other_overlapped

    def test_a_fresh_call_lies_where_no_input_of_the_job_has_been(self):
        places, fresh_overlapped, other_overlapped = self.run_calls({3, 4, 7, 11})
        self.assertEqual(fresh_overlapped, [False] * 4)
        self.assertEqual(places.fresh_calls, 4)
        # Without placement the allocator hands later calls the blocks earlier calls freed.
        self.assertIn(True, other_overlapped)

    def test_hundreds_of_fresh_calls_of_small_inputs_still_find_unused_addresses(self):
        # The allocator recycles a few small blocks: placement must not run out of fresh ranges.
        places, fresh_overlapped, _ = self.run_calls(set(range(300)), count=300)
        self.assertEqual(fresh_overlapped, [False] * 300)

    def test_the_used_ranges_are_kept_once_each(self):
        # Calls mostly repeat the allocator's ranges, and fresh ranges are never handed out again:
        # what a fresh placement checks grows with the distinct ranges, not with the calls (320 calls
        # not placed fresh, three inputs each, noted 960 ranges before; about 100 distinct here).
        places, fresh_overlapped, _ = self.run_calls(set(range(0, 400, 5)), count=400)
        self.assertEqual(fresh_overlapped, [False] * 80)
        self.assertLess(len(places.used), 320)

    def test_fresh_calls_after_a_burst_of_releases_still_find_unused_addresses(self):
        # A candidate that keeps every call's inputs and lets them all go at once (or a garbage
        # collection pass that frees them together) must not leave used ranges for the next fresh call.
        places = placement.InputPlacements("cpu")
        kept, earlier = [], []
        for call in range(200):
            got = places.receive(received(call), True)
            earlier += spans(got, [])
            kept.append(got)
        del kept, got
        for call in range(200, 205):
            got = places.receive(received(call), True)
            self.assertFalse(any(overlaps(s, earlier) for s in spans(got, [])))
            earlier += spans(got, [])
            del got

    def test_a_fresh_placement_releases_its_memory_once_its_tensor_is_gone(self):
        places = placement.InputPlacements("cpu")
        got = places.receive([torch.ones(1 << 20)], True)
        self.assertEqual(len(places.mapped), 1)
        places.release()  # the tensor is alive: its memory stays, and so do its values
        self.assertEqual(len(places.mapped), 1)
        self.assertEqual(got[0].sum().item(), 1 << 20)
        del got
        places.release()
        self.assertEqual(places.mapped, [])
        self.assertEqual(places.parked[-1][:8], bytes(8))  # its pages were released: they read as zeros

    def test_inputs_that_share_storage_all_arrive_intact(self):
        # The copies the inputs came in are scrambled only once every input is moved.
        places = placement.InputPlacements("cpu")
        base = torch.arange(12.0).reshape(3, 4)
        got = places.receive([base, base.t(), base], True)
        for tensor, expected in zip(got, (torch.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4).t(),
                                          torch.arange(12.0).reshape(3, 4))):
            torch.testing.assert_close(tensor, expected, rtol=0, atol=0)

    def test_calls_not_placed_fresh_keep_their_tensors(self):
        places = placement.InputPlacements("cpu")
        inputs = received(1)
        got = places.receive(inputs, False)
        self.assertIs(got[0], inputs[0])
        self.assertEqual(places.fresh_calls, 0)


if __name__ == "__main__":
    unittest.main()
