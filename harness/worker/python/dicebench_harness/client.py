"""A Python host for worker processes, for tests and tools (the real host is C++).

WorkerProcess starts `python -m dicebench_harness --role ROLE --device DEVICE --log LOG` with
pipes, reads and checks the hello, and offers request() (write one frame, read one reply, check
the reply against protocol.REPLIES; worker requests on the way, such as candidate.call_done, are
answered by a callable given) and close() (shutdown, then wait).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Callable

from . import protocol

HARNESS_MODULES = ("dicebench_harness", "dicebench_timing", "dicebench_fastpath")


def harness_python_path() -> str:
    """The folders this process imports the harness's Python from, as a PYTHONPATH (the worker's
    packages live in their concerns' folders in the source tree, and together when installed)."""
    import importlib.util

    folders: list[str] = []
    for name in HARNESS_MODULES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        folder = os.path.dirname(os.path.abspath(spec.origin))
        if spec.submodule_search_locations is not None:  # a package: its parent holds it
            folder = os.path.dirname(folder)
        if folder not in folders:
            folders.append(folder)
    return os.pathsep.join(folders)


class WorkerError(Exception):
    pass


class WorkerProcess:
    def __init__(self, role: str, *, device: str = "cpu", log_path: str = os.devnull,
                 python: str = sys.executable, env: dict | None = None):
        environment = dict(os.environ if env is None else env)
        environment["PYTHONPATH"] = harness_python_path() + (
            os.pathsep + environment["PYTHONPATH"] if environment.get("PYTHONPATH") else "")
        self.process = subprocess.Popen(
            [python, "-m", "dicebench_harness", "--role", role, "--device", device,
             "--log", log_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment, bufsize=0)
        self.progress: list[dict] = []
        self.hello = self.read()
        if self.hello is None or self.hello.get("type") != "hello":
            self.process.kill()
            self.process.wait()
            raise WorkerError(f"worker did not say hello: {self.hello!r}")
        protocol.validate_reply(self.hello)
        if self.hello["protocol"] != protocol.PROTOCOL_VERSION:
            raise WorkerError(f"worker speaks protocol {self.hello['protocol']}")

    def send(self, message: dict) -> None:
        protocol.write_frame(self.process.stdin.fileno(), message)

    def read(self) -> dict | None:
        return protocol.read_frame(self.process.stdout.fileno())

    def request(self, message: dict, answer: Callable[[dict], dict] | None = None) -> dict:
        """Send a request and return its reply; progress messages on the way go to self.progress,
        and the worker's own requests (candidate.compile, candidate.call_done) to `answer`, whose
        result is sent back."""
        self.send(message)
        while True:
            reply = self.read()
            if reply is None:
                raise WorkerError(f"worker closed the channel (exit code {self.process.wait()})")
            reply = protocol.validate_reply(reply)
            if reply["type"] in ("candidate.compile", "candidate.call_done"):
                if answer is None:
                    raise WorkerError(f"the worker sent {reply['type']} and nothing answers it")
                self.send(answer(reply))
                continue
            if not reply["type"].endswith(".progress"):
                return reply
            self.progress.append(reply)

    def close(self, timeout: float = 30.0) -> int:
        try:
            self.send({"type": "shutdown"})
        except OSError:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def __enter__(self) -> "WorkerProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.process.poll() is None:
            self.close()
