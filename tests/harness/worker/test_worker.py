"""worker.serve() in this process over pipes: hello, dispatch, error replies, exit codes."""

import os
import struct
import threading
import unittest
from unittest import mock

from dicebench_harness import numerics, protocol, worker
from dicebench_harness.errors import ShutdownRequested


class ServedWorker:
    """serve() running in a thread, with the test holding the other ends of its two pipes."""

    def __init__(self, role, device="cpu"):
        self.request_read, self.request_write = os.pipe()
        self.reply_read, self.reply_write = os.pipe()
        self.exit_code = None
        self.thread = threading.Thread(target=self._serve, args=(role, device), daemon=True)
        self.thread.start()

    def _serve(self, role, device):
        try:
            self.exit_code = worker.serve(role, device, self.request_read, self.reply_write)
        finally:
            os.close(self.reply_write)

    def send(self, message):
        protocol.write_frame(self.request_write, message)

    def send_raw(self, data):
        os.write(self.request_write, data)

    def read(self):
        return protocol.read_frame(self.reply_read)

    def request(self, message):
        self.send(message)
        return self.read()

    def finish(self, timeout=30):
        """Close our end of the request pipe (EOF) unless already closed, wait, return the code."""
        if self.request_write is not None:
            os.close(self.request_write)
            self.request_write = None
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "serve() did not return"
        os.close(self.request_read)
        os.close(self.reply_read)
        return self.exit_code


class WorkerLoopTest(unittest.TestCase):
    def setUp(self):
        patcher = mock.patch.object(worker, "_log", lambda text: None)  # keep test output clean
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        numerics.apply_numerics()

    def test_hello_then_shutdown(self):
        served = ServedWorker("reference")
        hello = served.read()
        protocol.validate_reply(hello)
        self.assertEqual(hello["type"], "hello")
        self.assertEqual(hello["protocol"], protocol.PROTOCOL_VERSION)
        self.assertEqual(hello["role"], "reference")
        self.assertEqual(hello["pid"], os.getpid())
        self.assertEqual((hello["device"], hello["device_name"]), ("cpu", "cpu"))
        import torch

        self.assertEqual(hello["torch"], torch.__version__)
        served.send({"type": "shutdown"})
        served.thread.join(30)
        self.assertEqual(served.exit_code, 0)
        # The answer comes once the device memory is cleared (none on the CPU); then nothing.
        self.assertEqual(served.read(), {"type": "shutdown.done", "job": "", "zeroed_bytes": 0, "message": ""})
        self.assertIsNone(served.read(), "nothing after shutdown.done")
        served.finish()

    def test_shutdown_is_answered_with_its_job_after_the_device_memory_is_cleared(self):
        served = ServedWorker("candidate")
        served.read()
        cleared = []
        with mock.patch("dicebench_harness.scrub.zero_everything",
                        lambda device, pools=(): cleared.append(device) or 4096):
            served.send({"type": "shutdown", "job": "c7"})
            served.thread.join(30)
        self.assertEqual(cleared, ["cpu"])
        self.assertEqual(served.read(), {"type": "shutdown.done", "job": "c7", "zeroed_bytes": 4096, "message": ""})
        served.finish()

    def test_a_failed_clearing_is_said_in_the_answer_and_the_worker_still_ends(self):
        served = ServedWorker("reference")
        served.read()

        def fails(device, pools=()):
            raise RuntimeError("dicebench_cuda: cudaMemsetAsync: cudaErrorIllegalAddress")

        with mock.patch("dicebench_harness.scrub.zero_everything", fails):
            served.send({"type": "shutdown", "job": "r1"})
            served.thread.join(30)
        self.assertEqual(served.exit_code, 0)
        reply = served.read()
        self.assertEqual((reply["type"], reply["job"], reply["zeroed_bytes"]), ("shutdown.done", "r1", 0))
        self.assertIn("cudaErrorIllegalAddress", reply["message"])
        served.finish()

    def test_the_end_of_input_clears_the_device_memory_too(self):
        served = ServedWorker("candidate")
        served.read()
        cleared = []
        with mock.patch("dicebench_harness.scrub.zero_everything",
                        lambda device, pools=(): cleared.append(device) or 0):
            self.assertEqual(served.finish(), 0)
        self.assertEqual(cleared, ["cpu"])

    def test_eof_ends_with_zero(self):
        served = ServedWorker("candidate")
        self.assertEqual(served.read()["role"], "candidate")
        self.assertEqual(served.finish(), 0)

    def test_bad_requests_get_error_replies_and_the_loop_goes_on(self):
        served = ServedWorker("candidate")
        served.read()
        cases = [
            ({"type": "reference.compare", "job": "j1", "trial": 0,
              "outputs": {"transport": "raw_file", "path": "/x"}},
             "is for a reference worker; this is a candidate worker"),
            ({"type": "candidate.explode", "job": "j2"}, "unknown request type"),
            ({"type": "candidate.load", "job": "j3"}, "missing field"),
            ({"job": "j4"}, "no string field 'type'"),
            ({"type": "shutdown", "job": 5}, "field 'job'"),
        ]
        for message, expected in cases:
            with self.subTest(message=message):
                reply = served.request(message)
                self.assertEqual(reply["type"], "error")
                self.assertEqual(reply["job"], message["job"] if isinstance(message["job"], str) else "")
                self.assertIn(expected, reply["message"])
        body = b"{broken"
        served.send_raw(struct.pack("<I", len(body)) + body)
        reply = served.read()
        self.assertEqual(reply["type"], "error")
        self.assertIn("protocol error", reply["message"])
        self.assertEqual(served.request({"type": "reference.release", "job": "j"})["type"], "error",
                         "still answering after a malformed frame")
        self.assertEqual(served.finish(), 0)

    def test_oversized_frame_ends_the_worker(self):
        served = ServedWorker("reference")
        served.read()
        served.send_raw(struct.pack("<I", protocol.MAX_FRAME_BYTES + 1))
        reply = served.read()
        self.assertEqual(reply["type"], "error")
        self.assertIn("exceeds", reply["message"])
        served.thread.join(30)
        self.assertEqual(served.exit_code, worker.EXIT_PROTOCOL)
        served.finish()

    def test_truncated_frame_ends_the_worker(self):
        served = ServedWorker("reference")
        served.read()
        served.send_raw(struct.pack("<I", 50) + b'{"type"')
        os.close(served.request_write)
        served.request_write = None
        self.assertEqual(served.read()["type"], "error")
        self.assertEqual(served.finish(), worker.EXIT_PROTOCOL)

    def test_unusable_device(self):
        served = ServedWorker("reference", device="cuda:7")
        import torch

        reply = served.read()
        if torch.cuda.is_available() and torch.cuda.device_count() > 7:
            self.skipTest("this machine has a cuda:7")
        self.assertEqual(reply["type"], "error")
        self.assertIn("cannot start", reply["message"])
        self.assertEqual(served.finish(), worker.EXIT_DEVICE)

    def test_unknown_role(self):
        served = ServedWorker("judge")
        self.assertIn("unknown role", served.read()["message"])
        self.assertEqual(served.finish(), worker.EXIT_PROTOCOL)


class HandleMessageTest(unittest.TestCase):
    """handle_message() with handlers that misbehave: nothing escapes as an exception."""

    request = {"type": "reference.release", "job": "j"}

    def handle(self, handler):
        return worker.handle_message("reference", {"reference.release": handler}, self.request)

    def test_any_exception_becomes_an_error_reply(self):
        def exits(_):
            raise SystemExit(4)

        def interrupted(_):
            raise KeyboardInterrupt()

        def fails(_):
            raise ZeroDivisionError("boom")

        for handler, expected in ((exits, "SystemExit: 4"), (interrupted, "KeyboardInterrupt"),
                                  (fails, "ZeroDivisionError: boom")):
            with self.subTest(expected):
                reply = self.handle(handler)
                self.assertEqual(reply["type"], "error")
                self.assertEqual(reply["job"], "j")
                self.assertIn(expected, reply["message"])

    def test_invalid_replies_are_caught(self):
        reply = self.handle(lambda _: {"type": "reference.released"})
        self.assertEqual(reply["type"], "error")
        self.assertIn("invalid reply", reply["message"])

    def test_shutdown_raises_the_private_signal(self):
        with self.assertRaises(ShutdownRequested) as raised:
            worker.handle_message("candidate", {}, {"type": "shutdown", "job": "c3"})
        self.assertEqual(raised.exception.job, "c3")

    def test_a_shutdown_that_comes_while_a_handler_waits_for_the_host_ends_the_loop(self):
        def waits_for_the_host(request):
            raise ShutdownRequested("c4")  # as CandidateRole._ask_host raises on a shutdown frame

        with self.assertRaises(ShutdownRequested):
            worker.handle_message("candidate", {"candidate.init": waits_for_the_host},
                                  {"type": "candidate.init", "job": "c4", "init_seed": 1, "init_inputs": "x"})

    def test_a_candidate_waiting_for_the_hosts_answer_takes_shutdown_as_the_end(self):
        from dicebench_harness.candidate import CandidateRole

        role = CandidateRole("cpu", host=lambda message: {"type": "shutdown", "job": "c5"})
        with self.assertRaises(ShutdownRequested) as raised:
            role._ask_host({"type": "candidate.call_done", "job": "c5", "call": 0, "more": True,
                            "outputs": {"transport": "raw_file", "path": "/x"}}, ("timing.next", "timing.stop"))
        self.assertEqual(raised.exception.job, "c5")


if __name__ == "__main__":
    unittest.main()
