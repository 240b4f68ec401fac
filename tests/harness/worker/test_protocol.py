"""Framing and the request/reply validator (protocol.py); torch-free."""

import os
import struct
import threading
import unittest

from dicebench_harness import protocol
from dicebench_harness.protocol import ProtocolError, ValidationError


def _pipe_with(data: bytes) -> int:
    """A read fd whose pipe holds data and is then closed for writing."""
    read_fd, write_fd = os.pipe()

    def writer():
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
        os.close(write_fd)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    return read_fd


def _prepare(**overrides):
    request = {"type": "reference.prepare", "job": "j", "problem_source": "x = 1",
               "device": "cpu", "init_seed": 1, "work_dir": "/tmp/w"}
    request.update(overrides)
    return request


class FramingTest(unittest.TestCase):
    def test_round_trip_keeps_the_object(self):
        message = {"type": "x", "job": "é✓", "nested": {"list": [1, 2.5, None, True]}}
        fd = _pipe_with(protocol.encode_frame(message) + protocol.encode_frame({"type": "y"}))
        try:
            self.assertEqual(protocol.read_frame(fd), message)
            self.assertEqual(protocol.read_frame(fd), {"type": "y"})
            self.assertIsNone(protocol.read_frame(fd))
        finally:
            os.close(fd)

    def test_header_is_little_endian_length(self):
        frame = protocol.encode_frame({"type": "a"})
        (length,) = struct.unpack("<I", frame[:4])
        self.assertEqual(length, len(frame) - 4)
        self.assertEqual(frame[4:], b'{"type":"a"}')

    def test_write_frame_to_a_pipe(self):
        read_fd, write_fd = os.pipe()
        try:
            protocol.write_frame(write_fd, {"type": "hello"})
            os.close(write_fd)
            self.assertEqual(protocol.read_frame(read_fd), {"type": "hello"})
        finally:
            os.close(read_fd)

    def test_eof_before_a_frame_is_none(self):
        fd = _pipe_with(b"")
        try:
            self.assertIsNone(protocol.read_frame(fd))
        finally:
            os.close(fd)

    def test_truncated_header_is_fatal(self):
        fd = _pipe_with(b"\x05\x00")
        try:
            with self.assertRaises(ProtocolError) as caught:
                protocol.read_frame(fd)
            self.assertTrue(caught.exception.fatal)
        finally:
            os.close(fd)

    def test_truncated_body_is_fatal(self):
        fd = _pipe_with(struct.pack("<I", 100) + b'{"type":')
        try:
            with self.assertRaises(ProtocolError) as caught:
                protocol.read_frame(fd)
            self.assertTrue(caught.exception.fatal)
            self.assertIn("truncated", str(caught.exception))
        finally:
            os.close(fd)

    def test_oversized_frame_is_refused_before_reading_it(self):
        fd = _pipe_with(struct.pack("<I", protocol.MAX_FRAME_BYTES + 1) + b"{}")
        try:
            with self.assertRaises(ProtocolError) as caught:
                protocol.read_frame(fd)
            self.assertTrue(caught.exception.fatal)
            self.assertIn("exceeds", str(caught.exception))
        finally:
            os.close(fd)

    def test_frame_of_exactly_the_limit_is_accepted(self):
        body = b'{"type":"' + b"a" * 100 + b'"}'
        fd = _pipe_with(struct.pack("<I", len(body)) + body)
        try:
            self.assertEqual(protocol.read_frame(fd, max_bytes=len(body))["type"], "a" * 100)
        finally:
            os.close(fd)

    def test_oversized_message_is_not_written(self):
        with self.assertRaises(ProtocolError):
            protocol.encode_frame({"type": "x", "blob": "a" * 200}, max_bytes=100)
        with self.assertRaises(ProtocolError):
            protocol.encode_frame({"type": "x", "blob": "a" * protocol.MAX_FRAME_BYTES})

    def test_malformed_bodies_are_not_fatal(self):
        for body in (b"{not json", b"[1, 2]", b"\xff\xfe", b'"text"'):
            fd = _pipe_with(struct.pack("<I", len(body)) + body + protocol.encode_frame({"type": "ok"}))
            try:
                with self.assertRaises(ProtocolError) as caught:
                    protocol.read_frame(fd)
                self.assertFalse(caught.exception.fatal, body)
                self.assertEqual(protocol.read_frame(fd), {"type": "ok"}, "stream stays in sync")
            finally:
                os.close(fd)

    def test_non_finite_numbers_become_null(self):
        frame = protocol.encode_frame({"type": "x", "a": float("nan"), "b": [float("inf"), 1.5]})
        self.assertEqual(frame[4:], b'{"type":"x","a":null,"b":[null,1.5]}')


class ValidatorTest(unittest.TestCase):
    def test_valid_request_gets_defaults(self):
        checked = protocol.validate_request(_prepare())
        self.assertEqual(checked["type"], "reference.prepare")
        self.assertEqual(checked["tolerance"], "per_dtype")
        self.assertEqual(checked["problem_name"], "problem")
        self.assertEqual(checked["model_mode"], "train")  # the host's default (kDefaultModelMode)

    def test_missing_field(self):
        request = _prepare()
        del request["init_seed"]
        with self.assertRaisesRegex(ValidationError, "missing field 'init_seed'"):
            protocol.validate_request(request)

    def test_wrong_types(self):
        cases = [
            ({"init_seed": "1"}, "init_seed"),
            ({"init_seed": True}, "init_seed"),  # a bool is not an integer here
            ({"init_seed": 1.0}, "init_seed"),
            ({"init_seed": -1}, "init_seed"),
            ({"init_seed": 2**63}, "init_seed"),
            ({"job": ""}, "job"),
            ({"job": 5}, "job"),
            ({"tolerance": "loose"}, "tolerance"),
            ({"tolerance": "kernelbench"}, "tolerance"),  # old names are the host's to translate
            ({"tolerance": "compat"}, "tolerance"),
            ({"model_mode": "training"}, "model_mode"),
        ]
        for overrides, field in cases:
            with self.subTest(overrides=overrides):
                with self.assertRaisesRegex(ValidationError, f"field '{field}'"):
                    protocol.validate_request(_prepare(**overrides))

    def test_unknown_field_is_refused(self):
        with self.assertRaisesRegex(ValidationError, "unknown field 'seeds'"):
            protocol.validate_request(_prepare(seeds=[1]))

    def test_unknown_or_missing_type(self):
        with self.assertRaisesRegex(ValidationError, "unknown request type"):
            protocol.validate_request({"type": "reference.explode", "job": "j"})
        with self.assertRaisesRegex(ValidationError, "no string field 'type'"):
            protocol.validate_request({"job": "j"})
        with self.assertRaisesRegex(ValidationError, "no string field 'type'"):
            protocol.validate_request({"type": 3})

    def test_roles(self):
        self.assertEqual(protocol.request_role("reference.compare"), "reference")
        self.assertEqual(protocol.request_role("candidate.forward"), "candidate")
        self.assertIsNone(protocol.request_role("shutdown"))

    def test_timing_parameters(self):
        base = {"type": "reference.time", "job": "j", "seed": 3, "warmup": 1, "min_trials": 5,
                "max_trials": 10, "budget_s": 2}
        checked = protocol.validate_request(base)
        self.assertEqual((checked["target_rel_ci"], checked["warm_calls"]), (0.02, True))  # the baseline warm, too
        with self.assertRaisesRegex(ValidationError, "warm_calls"):
            protocol.validate_request({**base, "warm_calls": 1})
        with self.assertRaisesRegex(ValidationError, "max_trials is less than min_trials"):
            protocol.validate_request({**base, "max_trials": 4})
        with self.assertRaisesRegex(ValidationError, "budget_s"):
            protocol.validate_request({**base, "budget_s": 0})
        with self.assertRaisesRegex(ValidationError, "min_trials"):
            protocol.validate_request({**base, "min_trials": 0})

    def test_candidate_time_and_transfers(self):
        inputs = {"transport": "raw_file", "path": "/w/inputs-0.pt"}
        timed = {"type": "candidate.time", "job": "j", "inputs": inputs, "outputs_path": "/w/o.pt",
                 "warmup": 0, "min_trials": 1, "max_trials": 3, "budget_s": 0.5}
        checked = protocol.validate_request(timed)
        self.assertEqual((checked["target_rel_ci"], checked["warm_calls"], checked["mask_key"]), (0.02, True, None))
        self.assertEqual(protocol.validate_request({**timed, "mask_key": 5, "warm_calls": False})["mask_key"], 5)
        with self.assertRaisesRegex(ValidationError, "mask_key"):
            protocol.validate_request({**timed, "mask_key": -1})
        with self.assertRaisesRegex(ValidationError, "missing field 'budget_s'"):
            protocol.validate_request({k: v for k, v in timed.items() if k != "budget_s"})
        forward = {"type": "candidate.forward", "job": "j", "trial": 0, "inputs": inputs,
                   "outputs_path": "/w/outputs-0.pt"}
        protocol.validate_request(forward)
        protocol.validate_request({**forward, "inputs": {"transport": "cuda_ipc", "tree": {}}})
        for bad in ({"transport": "carrier pigeon"}, ["/w/0.pt"], None):
            with self.subTest(bad=bad):
                with self.assertRaisesRegex(ValidationError, "field 'inputs'"):
                    protocol.validate_request({**forward, "inputs": bad})

    def test_defaults_are_fresh_copies(self):
        load = {"type": "candidate.load", "job": "j", "problem_source": "", "candidate_source": "", "device": "cpu",
                "work_dir": "/w"}
        first = protocol.validate_request(load)
        self.assertIsNone(first["fastpath"])
        first["fastpath"] = {"cache_dir": "/c"}
        self.assertIsNone(protocol.validate_request(load)["fastpath"])

    def test_candidate_requests_carry_no_secrets(self):
        # What the reference's worker alone holds: the inputs' seeds, which calls are checked (a
        # batch's calls, a trial's outputs), the tolerance.
        for kind in ("candidate.load", "candidate.init", "candidate.forward", "candidate.time"):
            spec = protocol.REQUESTS[kind]
            fields = set(spec.required) | set(spec.optional)
            for secret in ("seed", "input_seeds", "calls", "outputs", "tolerance"):
                self.assertNotIn(secret, fields, kind)
        # The problem's source is no secret (the prompt shows it): the load carries it, to run ahead
        # of the candidate's in its namespace. A field added to the load decides what a candidate sees.
        load = protocol.REQUESTS["candidate.load"]
        self.assertEqual(set(load.required) | set(load.optional),
                         {"job", "problem_source", "candidate_source", "device", "work_dir", "fastpath", "toolchain"})

    def test_replies(self):
        protocol.validate_reply({"type": "reference.compared", "job": "j", "trial": 0,
                                 "verdict": "correct", "max_abs_diff": 0.0, "mean_abs_diff": None,
                                 "margin": 0.5, "message": ""})
        with self.assertRaisesRegex(ValidationError, "verdict"):
            protocol.validate_reply({"type": "reference.compared", "job": "j", "trial": 0,
                                     "verdict": "almost", "max_abs_diff": 0.0,
                                     "mean_abs_diff": 0.0, "margin": None, "message": ""})
        with self.assertRaisesRegex(ValidationError, "traits"):
            protocol.validate_reply({"type": "reference.traits_judged", "job": "j", "ok": True,
                                     "message": "", "traceback_tail": "", "details": {},
                                     "traits": ["constant_output", "made_up"]})
        done = {"type": "candidate.call_done", "job": "j", "call": 3, "more": True,
                "outputs": {"transport": "raw_file", "path": "/w/o.pt"}}
        protocol.validate_reply(done)
        with self.assertRaisesRegex(ValidationError, "outputs"):
            protocol.validate_reply({**done, "outputs": None})

    def test_batches(self):
        call = {"trial": 6, "seed": 11, "outputs": True, "mask_key": 12}
        batch = {"type": "reference.batch", "job": "j", "calls": [call, {**call, "trial": 7}], "budget_bytes": 1 << 32}
        self.assertEqual(len(protocol.validate_request(batch)["calls"]), 2)
        for bad in ([], [{**call, "seed": -1}], [{**call, "extra": 1}], [{k: v for k, v in call.items() if k != "mask_key"}],
                    [call] * (protocol.MAX_BATCH_CALLS + 1), "calls"):
            with self.subTest(bad=str(bad)[:60]):
                with self.assertRaisesRegex(ValidationError, "field 'calls'"):
                    protocol.validate_request({**batch, "calls": bad})
        with self.assertRaisesRegex(ValidationError, "budget_bytes"):
            protocol.validate_request({**batch, "budget_bytes": 0})
        ready = {"type": "reference.batch_ready", "job": "j", "ok": True, "message": "", "traceback_tail": "",
                 "error_class": "", "made": 1, "inputs": [{"transport": "raw_file", "path": "/w/inputs-6.pt"}],
                 "masked": False, "input_bytes": 4, "output_bytes": 4}
        protocol.validate_reply(ready)
        with self.assertRaisesRegex(ValidationError, "inputs"):
            protocol.validate_reply({**ready, "inputs": [None]})

    def test_timing_answers(self):
        inputs = {"transport": "raw_file", "path": "/w/inputs-9.pt"}
        self.assertEqual(protocol.validate_request({"type": "timing.next", "job": "j", "call": 1,
                                                    "inputs": inputs})["call"], 1)
        self.assertEqual(protocol.validate_request({"type": "timing.next", "job": "j", "call": 1, "inputs": inputs,
                                                    "mask_key": 3})["mask_key"], 3)
        protocol.validate_request({"type": "timing.stop", "job": "j"})
        with self.assertRaisesRegex(ValidationError, "call"):
            protocol.validate_request({"type": "timing.next", "job": "j", "call": -1, "inputs": inputs})
        with self.assertRaisesRegex(ValidationError, "unknown reply type"):
            protocol.validate_reply({"type": "candidate.forward"})

    def test_error_reply(self):
        self.assertEqual(protocol.error_reply(7, "m"), {"type": "error", "job": "", "message": "m"})
        self.assertEqual(protocol.error_reply("j", "m")["job"], "j")


if __name__ == "__main__":
    unittest.main()
