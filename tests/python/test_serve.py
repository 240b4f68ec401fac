"""`dicebench serve` on the CPU through the real workers, as trainers and their failures reach it:
32 concurrent clients, a repeated id (answered from the store, never judged twice, also while the
first is in flight), a client that disconnects mid-request (its item is judged and stored), an
oversized body, a missing token, a full queue (429 with Retry-After), jobs, OpenRLHF's route, and
SIGTERM mid-batch (drained: nothing lost; after a restart the same ids are answered, none judged
again)."""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from support import CLI, DATA, KERNELBENCH, read

ADD = "kernelbench/level1/1"
# Answers in the language the server's prompts ask for (Triton, through its interpreter on the CPU):
# a plain-PyTorch answer would be flagged backend_unused, which zeroes its reward.
CORRECT = read(os.path.join(DATA, "replay", "triton", "level_1_problem_1_sample_0_kernel.py"))
SLOW = CORRECT.replace("        super().__init__()\n", "        super().__init__()\n        import time\n        time.sleep(3)\n", 1)
WRONG = CORRECT.replace("+ tl.load(y_ptr", "- tl.load(y_ptr")
assert SLOW != CORRECT and WRONG != CORRECT
TOKEN = "s3cret-token"


class Server:
    """A `dicebench serve` process on a free port, its log kept."""

    def __init__(self, db: str, *extra: str, token: str | None = TOKEN):
        env = dict(os.environ)
        if token:
            env["DICEBENCH_SERVE_TOKEN"] = token
        self.token = token
        self.log = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            [CLI, "serve", "--port", "0", "--db", db, "--device", "cpu", "--suite", "kernelbench-l1",
             "--set", f"kernelbench.root={KERNELBENCH}", "--set", "kernelbench.backend=triton",
             "--set", "eval.cpu_workers=2", "--set",
             "eval.timing_budget_s=0.3", "--set", "eval.timeout_s=30", *extra],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 120
        while time.time() < deadline:
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.text())
            if match:
                self.port = int(match.group(1))
                return
            if self.process.poll() is not None:
                raise AssertionError(f"dicebench serve ended: {self.text()}")
            time.sleep(0.1)
        raise AssertionError(f"dicebench serve did not listen: {self.text()}")

    def text(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def call(self, method: str, path: str, body=None, token: str | None = "default", timeout: float = 300):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Content-Type": "application/json"}
        token = self.token if token == "default" else token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        connection.close()
        content = json.loads(raw) if response.getheader("Content-Type", "").startswith("application/json") else raw.decode()
        return response.status, content, dict(response.getheaders())

    def metric(self, name: str, labels: str = "") -> float:
        _, text, _ = self.call("GET", "/metrics")
        match = re.search(rf"^{re.escape(name + labels)} (\S+)$", text, re.M)
        return float(match.group(1)) if match else 0.0

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=300)


class Service(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.db = os.path.join(cls.folder.name, "serve.db")
        cls.server = Server(cls.db, "--max-body-mb", "1", "--reward", "correctness")

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        cls.folder.cleanup()
        assert code == 0, cls.server.text()

    def test_health_needs_no_token_and_everything_else_does(self):
        status, health, _ = self.server.call("GET", "/health", token=None)
        self.assertEqual((status, health["status"], health["device"]), (200, "ok", "cpu"))
        for token in (None, "wrong"):
            status, body, headers = self.server.call("POST", "/v1/evaluate", {"problem": ADD, "candidate": CORRECT},
                                                     token=token)
            self.assertEqual(status, 401)
            self.assertEqual(headers.get("WWW-Authenticate"), "Bearer")
        status, _, _ = self.server.call("GET", "/v1/workers", token=None)
        self.assertEqual(status, 401)

    def test_bad_requests_get_one_error_each(self):
        # A body past the cap is refused from its headers, before it is read.
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=60) as raw:
            raw.sendall(b"POST /v1/evaluate/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + f"Authorization: Bearer {TOKEN}\r\nContent-Length: {2 << 20}\r\n\r\n".encode())
            self.assertTrue(raw.recv(4096).startswith(b"HTTP/1.1 413"))
        for bad, message in (({"items": [{"problem": ADD}]}, "candidate"), ({"items": "no"}, "items"),
                             ({"items": [], "reward": {"shape": "fastest"}}, "no reward shape"),
                             ({"items": [{"problem": ADD, "candidate": "x", "extra": 1}]}, "no field")):
            status, body, _ = self.server.call("POST", "/v1/evaluate/batch", bad)
            self.assertEqual(status, 400, body)
            self.assertIn(message, body["error"])
        status, _, _ = self.server.call("POST", "/v1/evaluate", b"{not json")
        self.assertEqual(status, 400)

    def test_32_concurrent_clients_each_get_their_own_verdict(self):
        results = {}

        def client(i: int) -> None:
            candidate = CORRECT if i % 4 else WRONG
            results[i] = self.server.call("POST", "/v1/evaluate", {"id": f"c32-{i}", "problem": ADD, "candidate": candidate})

        threads = [threading.Thread(target=client, args=(i,)) for i in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for i, (status, body, _) in results.items():
            self.assertEqual(status, 200, body)
            self.assertEqual(body["id"], f"c32-{i}")
            self.assertEqual(body["evaluation"]["verdict"], "correct" if i % 4 else "output_mismatch")
            self.assertEqual(body["reward"], 1.0 if i % 4 else 0.0)  # the server's default shape
            self.assertEqual(body["reward_shape"], "correctness")

    def test_a_repeated_id_is_answered_not_judged_again(self):
        judged = self.server.metric("dicebench_items_total", '{source="judged"}')
        first = [None, None]

        def ask(slot: int) -> None:  # two at once: the second waits on the first's judging
            first[slot] = self.server.call("POST", "/v1/evaluate", {"id": "again", "problem": ADD, "candidate": SLOW})

        threads = [threading.Thread(target=ask, args=(slot,)) for slot in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        later = self.server.call("POST", "/v1/evaluate", {"id": "again", "problem": ADD, "candidate": SLOW})
        for status, body, _ in (*first, later):
            self.assertEqual(status, 200)
            self.assertEqual(body["evaluation"]["verdict"], "correct")
        self.assertEqual(first[0][1]["evaluation"], later[1]["evaluation"])
        self.assertEqual(self.server.metric("dicebench_items_total", '{source="judged"}') - judged, 1)
        # A different reward for the same id is computed from what was stored, not judged again.
        status, body, _ = self.server.call("POST", "/v1/evaluate", {"id": "again", "problem": ADD, "candidate": SLOW,
                                                                    "reward": {"shape": "log_speedup"}})
        self.assertEqual((status, body["reward_shape"]), (200, "log_speedup"))
        self.assertEqual(self.server.metric("dicebench_items_total", '{source="judged"}') - judged, 1)

    def test_a_client_that_disconnects_loses_nothing(self):
        judged = self.server.metric("dicebench_items_total", '{source="judged"}')
        body = json.dumps({"id": "gone", "problem": ADD, "candidate": SLOW}).encode()
        with socket.create_connection(("127.0.0.1", self.server.port)) as raw:
            raw.sendall(b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        # Gone before its answer; its item is judged anyway, and the same id is answered from the store.
        status, answer, _ = self.server.call("POST", "/v1/evaluate", {"id": "gone", "problem": ADD, "candidate": SLOW})
        self.assertEqual((status, answer["evaluation"]["verdict"]), (200, "correct"))
        self.assertEqual(self.server.metric("dicebench_items_total", '{source="judged"}') - judged, 1)

    def test_jobs_openrlhf_and_a_problem_that_fails(self):
        items = [{"id": "job-a", "problem": ADD, "completion": f"Here.\n```python\n{CORRECT}```\n"},
                 {"id": "job-b", "problem": ADD, "completion": "no code"},
                 {"id": "job-c", "problem": "kernelbench/level1/99", "candidate": CORRECT}]
        status, job, _ = self.server.call("POST", "/v1/evaluate/batch", {"items": items, "wait": False})
        self.assertEqual((status, job["status"]), (202, "running"))
        deadline = time.time() + 300
        while job["status"] != "done" and time.time() < deadline:
            time.sleep(0.5)
            status, job, _ = self.server.call("GET", f"/v1/jobs/{job['job']}")
        results = job["results"]
        self.assertEqual([r["id"] for r in results], ["job-a", "job-b", "job-c"])
        self.assertEqual([r["status"] for r in results], ["judged", "judged", "problem_failed"])
        self.assertEqual(results[1]["evaluation"]["verdict"], "extraction_failed")
        self.assertIsNone(results[2]["reward"])
        self.assertEqual(self.server.call("GET", "/v1/jobs/job-nope")[0], 404)
        prompt = "Write a fast adder.\n"
        status, body, _ = self.server.call("POST", "/v1/openrlhf", {
            "query": [prompt + f"```python\n{CORRECT}```", prompt + f"```python\n{WRONG}```"],
            "prompts": [prompt, prompt], "labels": [ADD, ADD]})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["rewards"], [1.0, 0.0])
        self.assertEqual(body["extra_logs"]["correct"], [1.0, 0.0])
        # A prompt that OpenRLHF cut at its start, holding a code block of its own: the response is
        # still found after the prompt's end (as the Python reward_func finds it), not the prompt's block.
        prompt = f"Fix this:\n```python\n{WRONG}```\nWrite a fast adder.\n"
        status, body, _ = self.server.call("POST", "/v1/openrlhf", {
            "query": [prompt[5:] + f"```python\n{CORRECT}```<|im_end|>"], "prompts": [prompt], "labels": [ADD]})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["rewards"], [1.0])


class Lifecycle(unittest.TestCase):
    def test_non_loopback_without_a_token_is_refused(self):
        done = subprocess.run([CLI, "serve", "--host", "0.0.0.0", "--port", "0", "--device", "cpu"],
                              capture_output=True, text=True, timeout=60,
                              env={k: v for k, v in os.environ.items() if k != "DICEBENCH_SERVE_TOKEN"})
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("needs a bearer token", done.stderr)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        # A reward shape that does not exist, or one that needs timing the settings turn off: one line,
        # and no database is made.
        with tempfile.TemporaryDirectory() as folder:
            db = os.path.join(folder, "serve.db")
            for extra, message in ((["--reward", "fastest"], "no reward shape"),
                                   (["--reward", "speedup", "--set", "eval.timing=off"], "eval.timing=off")):
                done = subprocess.run([CLI, "serve", "--port", "0", "--device", "cpu", "--db", db, *extra],
                                      capture_output=True, text=True, timeout=60)
                self.assertNotEqual(done.returncode, 0)
                self.assertIn(message, done.stderr)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
                self.assertFalse(os.path.exists(db))

    def test_a_full_queue_answers_429_and_sigterm_drains(self):
        items = [{"id": f"drain-{i}", "problem": ADD, "candidate": SLOW.replace("sleep(3)", f"sleep({1 + i % 2})")}
                 for i in range(6)]
        with tempfile.TemporaryDirectory() as folder:
            db = os.path.join(folder, "serve.db")
            server = Server(db, "--max-pending", "6", token=None)
            status, job, _ = server.call("POST", "/v1/evaluate/batch", {"items": items, "wait": False})
            self.assertEqual(status, 202)
            status, body, headers = server.call("POST", "/v1/evaluate", {"id": "one-more", "problem": ADD,
                                                                         "candidate": CORRECT})
            self.assertEqual(status, 429, body)
            self.assertGreaterEqual(int(headers["Retry-After"]), 1)
            self.assertEqual(server.stop(), 0, server.text())  # SIGTERM mid-batch
            self.assertIn("drained", server.text())
            with __import__("sqlite3").connect(db) as connection:
                rows = connection.execute("select id, status, verdict from judgements order by id").fetchall()
            self.assertEqual(rows, [(f"drain-{i}", "judged", "correct") for i in range(6)])
            again = Server(db, token=None)
            status, body, _ = again.call("POST", "/v1/evaluate/batch", {"items": items})
            self.assertEqual(status, 200)
            self.assertEqual([r["evaluation"]["verdict"] for r in body["results"]], ["correct"] * 6)
            self.assertEqual(again.metric("dicebench_items_total", '{source="judged"}'), 0)
            self.assertEqual(again.metric("dicebench_items_total", '{source="store"}'), 6)
            self.assertEqual(again.stop(), 0)


if __name__ == "__main__":
    unittest.main()
