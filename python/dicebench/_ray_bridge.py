"""The bridge between a dicebench host and an EvaluatorPool on a Ray cluster, for `dicebench run
--ray ADDRESS` and `dicebench serve --ray ADDRESS`: the host starts it as it starts a worker
(`python -m dicebench._ray_bridge --role ray_pool --device D --log L`) and speaks the worker
protocol's frames with it on stdin/stdout (harness/PROTOCOL.md, "The Ray pool"). It joins the
cluster, starts the pool with the host's own evaluation settings (DICEBENCH_RAY_SETTINGS: the [eval]
keys as the host read them), says hello and ray.pool (its actors, nodes, capacity and their
sandbox), then judges every ray.judge as it arrives (the pool's stream: a problem's candidates go
where its reference is warm) and answers each with ray.judged (the Judgement record) as its task
ends, in whatever order they end. It ends at shutdown, or when its input closes (the host gone),
and its actors with it; a pool with no actor left is an error frame, then exit status 1.

Environment: DICEBENCH_RAY_ADDRESS (the cluster: "auto", "HOST:PORT" or "ray://..."),
DICEBENCH_RAY_ACTORS (0: one per unit of the resource on CUDA, or per eval.cpu_workers CPUs of the
cluster on the CPU), DICEBENCH_RAY_RESOURCE ("auto", "none" or a custom resource's name),
DICEBENCH_RAY_SETTINGS (JSON object)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import socket
import struct
import sys
import threading
from typing import Any, BinaryIO

from . import _spec

ROLE = "ray_pool"
# Tasks of the pool's chunk each actor holds at once: enough that a GPU's slots and prefetch stay fed
# while items arrive one by one from the host.
DEPTH = 4


def read_frame(stream: BinaryIO) -> dict[str, Any] | None:
    """One frame (4-byte little-endian length, then UTF-8 JSON), or None at the end of input."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    (length,) = struct.unpack("<I", head)
    if length > _spec.MAX_FRAME_BYTES:
        raise ValueError(f"a frame of {length} bytes is over the protocol's limit")
    body = stream.read(length)
    if len(body) < length:
        return None
    message = json.loads(body.decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError("a frame is a JSON object")
    return message


class Frames:
    """Frames to the host, whole, from any thread."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        with self._lock:
            self._stream.write(struct.pack("<I", len(body)) + body)
            self._stream.flush()


def actor_count(ray: Any, device: str, resource: str | None, settings: dict[str, str]) -> int:
    """Actors for DICEBENCH_RAY_ACTORS=0: every unit of the resource (or GPU) the cluster has on
    CUDA; on the CPU, its CPUs over each actor's eval.cpu_workers."""
    total = ray.cluster_resources()
    if device == "cuda":
        return int(total.get(resource or "GPU", 0))
    return int(total.get(resource, 0)) if resource else int(total.get("CPU", 0)) // max(
        1, int(settings.get("eval.cpu_workers", "1")))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m dicebench._ray_bridge")
    parser.add_argument("--role", required=True, choices=[ROLE])
    parser.add_argument("--device", required=True, choices=["cpu", "cuda"])
    parser.add_argument("--log", default="")  # the host sends stderr there already
    args = parser.parse_args(argv)
    # Nothing but frames on the host's pipe: what Ray or anything else prints goes to stderr (the log).
    frames = Frames(os.fdopen(os.dup(1), "wb"))
    os.dup2(2, 1)
    try:
        import ray

        from .ray import EvaluatorPool, _Inbox

        settings = json.loads(os.environ.get("DICEBENCH_RAY_SETTINGS", "{}"))
        wanted = int(os.environ.get("DICEBENCH_RAY_ACTORS", "0"))
        named = os.environ.get("DICEBENCH_RAY_RESOURCE", "auto")
        resource = None if named == "none" else ("dicebench_gpu" if args.device == "cuda" else None) if named == "auto" \
            else named
        # Actors import dicebench from where this bridge does, on nodes that share the path.
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        python_path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
        address = os.environ.get("DICEBENCH_RAY_ADDRESS", "auto")
        check_reachable(address)
        ray.init(address=address, logging_level=logging.ERROR,
                 include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": python_path}})
        size = wanted or actor_count(ray, args.device, resource, settings)
        if size < 1:
            raise RuntimeError(f"the Ray cluster has no {resource or ('GPU' if args.device == 'cuda' else 'CPU')} "
                               f"for an evaluator actor: give its nodes --resources '{{\"{resource}\": N}}', or "
                               f"set eval.ray_resource")
        pool = EvaluatorPool(args.device, size, resource=resource, chunk=16, depth=DEPTH, settings=settings)
    except Exception as error:  # noqa: BLE001 - the host reads why in one line
        frames.send({"type": "error", "job": "", "message": f"the Ray pool did not start: {first_line(error)}"})
        return 1
    stats = pool.stats()
    frames.send({"type": "hello", "protocol": _spec.PROTOCOL_VERSION, "role": ROLE, "pid": os.getpid(),
                 "python": platform.python_version(), "torch": "", "device": args.device,
                 "device_name": f"Ray pool of {pool.size} actor(s) on {len({s['node'] for s in stats})} node(s)",
                 "timer": ""})
    frames.send({"type": "ray.pool", "job": "", "actors": pool.size, "nodes": len({s["node"] for s in stats}),
                 "capacity": pool.size * DEPTH * pool.chunk, "sandbox": stats[0]["sandbox"],
                 "hosts": sorted({s["host"] for s in stats})})
    inbox = _Inbox()

    def read_requests() -> None:
        try:
            while (message := read_frame(sys.stdin.buffer)) is not None:
                if message.get("type") == "shutdown":
                    inbox.close()  # judge what came, then end
                    return
                if message.get("type") != "ray.judge":
                    raise ValueError(f"unexpected request {message.get('type')!r}")
                inbox.put([(message["job"], (message["job"], message["problem"], message["candidate"]))])
        except Exception as error:  # noqa: BLE001 - a broken frame
            print(f"dicebench._ray_bridge: {first_line(error)}", file=sys.stderr)
        inbox.abandon()  # the host is gone (or broke the protocol): its candidates are no one's now

    threading.Thread(target=read_requests, daemon=True).start()

    def emit(jobs: list[str], judged: list[dict[str, Any]]) -> None:
        for job, judgement in zip(jobs, judged):
            frames.send({"type": "ray.judged", "job": job, "judgement": judgement})

    try:
        pool.stream(inbox, emit)
    except Exception as error:  # noqa: BLE001 - no actor left, or the host gone: what is pending fails
        if not inbox.abandoned:
            frames.send({"type": "error", "job": "", "message": first_line(error)})
        return 1
    finally:
        pool.close(wait=not inbox.abandoned)
    return 0


def check_reachable(address: str) -> None:
    """A HOST:PORT address must answer a TCP connection within 10 s: ray.init retries one that does
    not for many minutes, where the host's user is owed one line at once."""
    host, _, port = address.rpartition(":")
    if address == "auto" or "://" in address or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as error:
        raise RuntimeError(f"no Ray cluster answers at {address} ({error.strerror or error})") from None


def first_line(error: BaseException) -> str:
    """The error's first line (dicebench.ray has the same, but the bridge must say why even when
    importing ray, and so that module, fails)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
