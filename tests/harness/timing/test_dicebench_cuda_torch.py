"""The dicebench_cuda recorder under PyTorch on a GPU (label gpu), used as the harness uses it:
torch imported first, the device synchronized before begin() and before end(). Exits with 77
(skipped) where torch or a CUDA device is missing."""

import sys
import unittest

try:
    import torch
except ImportError:
    torch = None

if torch is None or not torch.cuda.is_available():
    print("[skipped] torch with a visible CUDA device is needed")
    sys.exit(77)

import dicebench_cuda  # noqa: E402  (after torch: the libcupti torch loaded is the one used)


def timed(recorder, fn):
    """As the harness's CuptiTimer times: end() right after the call (it synchronizes itself; a
    synchronize inside the call would count as the call's host time)."""
    torch.cuda.synchronize()
    start = recorder.begin()
    try:
        fn()
    except BaseException:
        recorder.cancel()
        raise
    result = recorder.end()
    assert result["begin_ns"] == start
    return result


class TorchRecorderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.recorder = dicebench_cuda.Recorder()
        cls.a = torch.randn(4096, 4096, device="cuda")
        cls.b = torch.randn(4096, 4096, device="cuda")
        cls.big = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")  # 256 MiB

    def test_work_on_a_side_stream_is_included(self):
        side = torch.cuda.Stream()

        def call():
            c = self.a @ self.b
            with torch.cuda.stream(side):
                d = torch.relu(self.b) * 3
            return c, d

        call()
        result = timed(self.recorder, call)
        streams = {k["stream"] for k in result["kernels"]}
        self.assertGreaterEqual(len(streams), 2, result["kernels"])
        self.assertIn(dicebench_cuda.stream_id(side.cuda_stream), streams)
        self.assertEqual(result["dropped"], 0)
        self.assertEqual(result["incomplete"], 0)
        self.assertTrue(result["device_work"])
        self.assertGreater(result["busy_ms"], 0)
        self.assertGreaterEqual(result["span_ms"] + 1e-9, result["busy_ms"])
        self.assertGreaterEqual(result["host_ms"] + 1e-9, result["span_ms"])
        summary = dicebench_cuda.summarize_kernels(result["kernels"], [])
        self.assertEqual(summary["candidate_share"], 0.0)  # PyTorch ops only
        print("\nside stream:", {k: result[k] for k in ("span_ms", "busy_ms", "host_ms", "device_span_ms")},
              [(g["name"][:60], g["launches"], round(g["total_ms"], 4)) for g in summary["kernels"]])

    def test_fill_of_256_mib_is_plausible_and_agrees_with_events(self):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def call():
            # a sleep first backs the stream up, so that the events bracket the fill on the device
            # with no host gaps between them
            torch.cuda._sleep(1_000_000)
            start.record()
            self.big.fill_(7)
            end.record()

        call()  # warm-up: the events are created on their first record
        result = timed(self.recorder, call)
        fills = [k for k in result["kernels"] if "fill" in k["name"].lower()] + result["memset"]
        self.assertEqual(len(fills), 1, result)
        duration_ms = (fills[0]["end_ns"] - fills[0]["start_ns"]) / 1e6
        events_ms = start.elapsed_time(end)
        print(f"\n256 MiB fill: CUPTI {duration_ms * 1e3:.1f} us, events {events_ms * 1e3:.1f} us, "
              f"span {result['span_ms'] * 1e3:.1f} us, host {result['host_ms'] * 1e3:.1f} us")
        # the events bracket the fill (loosely: their clock is not CUPTI's, and a GPU shared with
        # other processes stretches both); the record's own duration must be physically possible
        # (no GPU writes 10 TB/s)
        self.assertLessEqual(duration_ms, events_ms * 1.5 + 0.02)
        self.assertGreater(duration_ms, 0.01)
        self.assertLess(self.big.numel() * 4 / (duration_ms * 1e-3), 10e12)

    def test_repeated_calls_agree(self):
        def call():
            return self.a @ self.b

        for _ in range(3):
            call()
        spans = sorted(timed(self.recorder, call)["runtime_ms"] for _ in range(21))
        median = spans[10]
        print(f"\nmatmul 4096: median runtime {median:.4f} ms, min {spans[0]:.4f}, max {spans[-1]:.4f}")
        self.assertLess(spans[15] / spans[5], 1.10)

    def test_a_device_bound_call_runs_from_its_first_device_work(self):
        def call():
            # tens of ms on the device: longer than the launch takes the host even on a GPU shared
            # with other tests (a 4096 matmul's launch took 6.3 ms of host time under ctest -j4)
            torch.cuda._sleep(100_000_000)

        call()
        result = timed(self.recorder, call)
        self.assertGreater(result["launch_latency_ms"], 0)
        self.assertGreater(result["device_span_ms"], 10.0)
        self.assertGreater(result["device_span_ms"], result["call_host_ms"])
        self.assertEqual(result["runtime_ms"], result["device_span_ms"])
        # the span from the harness's marker is the launch latency plus the device span
        self.assertAlmostEqual(result["span_ms"], result["launch_latency_ms"] + result["device_span_ms"], delta=1e-5)

    def test_a_call_that_synchronizes_is_timed_by_its_host_time(self):
        def call():
            torch.cuda._sleep(10_000_000)
            torch.cuda.synchronize()  # the host waits for the device inside the call

        call()
        result = timed(self.recorder, call)
        self.assertGreaterEqual(result["call_host_ms"], result["device_span_ms"])
        self.assertEqual(result["runtime_ms"], result["call_host_ms"])

    def test_host_work_before_the_first_launch_counts(self):
        import time

        def call():
            until = time.perf_counter() + 0.002  # 2 ms on the CPU first (a candidate computing there)
            while time.perf_counter() < until:
                pass
            return self.b[:16] + 1  # then one tiny kernel

        call()
        result = timed(self.recorder, call)
        self.assertTrue(result["device_work"])
        self.assertLess(result["device_span_ms"], 1.0)
        self.assertGreaterEqual(result["call_host_ms"], 2.0)
        self.assertEqual(result["runtime_ms"], result["call_host_ms"])

    def test_end_synchronizes_even_if_the_caller_does_not(self):
        side = torch.cuda.Stream()
        torch.cuda.synchronize()
        self.recorder.begin()
        with torch.cuda.stream(side):
            torch.cuda._sleep(20_000_000)  # several ms, on a side stream
        result = self.recorder.end()  # no synchronize before it
        self.assertEqual(result["incomplete"], 0)
        self.assertEqual(len(result["kernels"]), 1, result)
        self.assertGreater(result["span_ms"], 2.0)
        self.assertLessEqual(result["last_end_ns"], result["host_end_ns"])

    def test_cpu_only_call_spans_host_time(self):
        result = timed(self.recorder, lambda: sum(range(1000)))
        self.assertFalse(result["device_work"])
        self.assertEqual(result["span_ms"], result["host_ms"])
        self.assertEqual(result["runtime_ms"], result["host_ms"])
        import time
        started = time.perf_counter()
        for _ in range(100):
            self.recorder.begin()
            self.recorder.end()
        print(f"\nbegin()+end() without work: {(time.perf_counter() - started) * 1e4:.1f} us per pair")

    def test_cuda_graph_replay_is_recorded(self):
        static_in = torch.randn(1 << 20, device="cuda")
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                static_in.mul_(1.0)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = (static_in * 2).relu_()
        result = timed(self.recorder, graph.replay)
        self.assertGreaterEqual(len(result["kernels"]), 2, result)
        del static_out

    def test_begin_inside_the_call_is_caught(self):
        def sneaky():
            self.a @ self.b
            torch.cuda.synchronize()
            dicebench_cuda.Recorder().begin()  # tries to restart the clock

        torch.cuda.synchronize()
        self.recorder.begin()
        sneaky()
        torch.cuda.synchronize()
        with self.assertRaises(RuntimeError):
            self.recorder.end()


class TorchRecorderWithProfilerTest(unittest.TestCase):
    """Runs after TorchRecorderTest (unittest sorts classes by name): once torch.profiler has run in
    a process, kernels there were seen to run about twice as slow (H200, torch 2.11), so the
    figures above are taken before it."""

    def test_another_cupti_client_does_not_silence_the_recorder(self):
        # torch.profiler (kineto) takes CUPTI's buffer callbacks and disables the kinds when it
        # stops; the next begin() takes them back.
        from torch.profiler import ProfilerActivity, profile

        recorder = dicebench_cuda.Recorder()
        a = torch.randn(4096, 4096, device="cuda")
        before = timed(recorder, lambda: a @ a)["span_ms"]
        with profile(activities=[ProfilerActivity.CUDA]):
            a @ a
            torch.cuda.synchronize()
        for _ in range(2):
            result = timed(recorder, lambda: a @ a)
            self.assertEqual(len(result["kernels"]), 1, result)
            self.assertTrue(result["device_work"])
        print(f"\nmatmul 4096 span before torch.profiler {before:.3f} ms, after {result['span_ms']:.3f} ms")


if __name__ == "__main__":
    unittest.main(verbosity=2)
