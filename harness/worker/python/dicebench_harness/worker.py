"""The worker's request loop: hello, then read, validate, dispatch, reply, until shutdown or EOF.

serve(role, device, fd_in, fd_out) is what the C++ dicebench-worker (and `python -m
dicebench_harness`) calls once the process's stdin/stdout have been moved to the private fds
fd_in / fd_out. It returns the process exit code:
  0  shutdown request or EOF on fd_in
  1  the channel could not be written (the host went away)
  2  the channel is out of sync (truncated frame, oversized frame) or the role is unknown
  3  the device cannot be used (an "error" message is sent instead of hello)

Every request gets exactly one reply frame. A request that does not validate,
is for the other role, or whose handler fails in any way (any BaseException, SystemExit and
KeyboardInterrupt included) gets {"type": "error", "job", "message"}. Handlers turn failures of
problem or candidate code into ordinary replies themselves (reference_failed, runtime_error...),
so "error" means the request or the harness is at fault. Every reply is checked against
protocol.REPLIES before it is sent.

Each request is logged as one line on stderr (the worker's log file).

Whenever the loop ends (shutdown, EOF, a broken channel), the worker zeroes the device memory it
holds (scrub.zero_everything: every segment of its CUDA allocator, the fresh placements still
mapped) before anything else of it runs: a later job's process may be handed that memory as it is.
A shutdown request is answered with shutdown.done after that. The processes (dicebench-worker,
`python -m dicebench_harness`) call serve with exit_at_end=True: it then ends the process with
os._exit right there, without finalizing Python, so no candidate code (an atexit hook, a finalizer)
runs after the memory was cleared.
"""

from __future__ import annotations

import gc
import os
import platform
import shutil
import sys
import tempfile
import time
from typing import Any

from . import protocol
from .errors import HostError, ShutdownRequested, exception_line, traceback_tail

EXIT_OK = 0
EXIT_CHANNEL_WRITE = 1
EXIT_PROTOCOL = 2
EXIT_DEVICE = 3


def _log(text: str) -> None:
    try:
        sys.stderr.write(f"[dicebench-worker {os.getpid()}] {text}\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - logging must never break the loop
        pass


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass


def handle_message(role: str, handlers: dict, message: dict) -> dict:
    """One decoded request -> one reply (raises ShutdownRequested for a shutdown request, also one
    that came while a handler waited for the host's answer to a request of its own)."""
    job = message.get("job", "")
    try:
        request = protocol.validate_request(message)
    except protocol.ValidationError as error:
        return protocol.error_reply(job, f"invalid request: {error}")
    kind = request["type"]
    if kind == "shutdown":
        raise ShutdownRequested(request["job"])
    wanted = protocol.request_role(kind)
    if wanted is not None and wanted != role:
        return protocol.error_reply(job, f"request {kind!r} is for a {wanted} worker; "
                                    f"this is a {role} worker")
    handler = handlers.get(kind)
    if handler is None:
        return protocol.error_reply(job, f"request {kind!r} has no handler in a {role} worker")
    try:
        reply = handler(request)
    except ShutdownRequested:
        raise
    except HostError as error:
        return protocol.error_reply(job, str(error))
    except BaseException as error:  # noqa: BLE001 - nothing may escape the loop
        return protocol.error_reply(job, f"{kind} failed inside the harness: "
                                    f"{exception_line(error)}\n{traceback_tail(error)}")
    try:
        return protocol.validate_reply(reply)
    except BaseException as error:  # noqa: BLE001
        return protocol.error_reply(job, f"harness bug: {kind} produced an invalid reply: {error}")


def _hello(role: str, device: str, device_name: str) -> dict:
    import torch

    from dicebench_timing import timer_for_device

    # The timer is made here, before any candidate code runs; its name keys cached baselines.
    return {"type": "hello", "protocol": protocol.PROTOCOL_VERSION, "role": role,
            "pid": os.getpid(), "python": platform.python_version(), "torch": torch.__version__,
            "device": device, "device_name": device_name, "timer": timer_for_device(device).name}


def serve(role: str, device: str, fd_in: int, fd_out: int, *, exit_at_end: bool = False) -> int:
    """Run the worker loop on the channel fds; returns the exit code (see the module docstring), or
    with exit_at_end ends the process with it (os._exit) once the device memory is cleared."""
    if role not in protocol.ROLES:
        _send_quietly(fd_out, protocol.error_reply("", f"unknown role {role!r}"))
        return EXIT_PROTOCOL
    try:
        from . import numerics, scrub  # noqa: F401 - scrub binds torch's calls before any candidate code runs
        from .devices import open_device

        device, device_name = open_device(device)
        numerics.apply_numerics()
    except BaseException as error:  # noqa: BLE001
        _send_quietly(fd_out, protocol.error_reply("", f"worker cannot start on device "
                                                   f"{device!r}: {exception_line(error)}"))
        return EXIT_DEVICE

    if not getattr(sys, "argv", None):  # an embedded interpreter may have none; some tools read it
        sys.argv = [f"dicebench-worker-{role}"]
    # The reference writes the problem's source file here, not in the job folder the candidate sees.
    private_dir = tempfile.mkdtemp(prefix="dicebench-reference-") if role == "reference" else None
    pools: list = []  # memory pools of the role's own (the reference's export pool), cleared at the end
    try:
        if role == "reference":
            from .reference import ReferenceRole

            assert private_dir is not None  # made above for the reference
            reference = ReferenceRole(device, private_dir)
            handlers, pools = reference.handlers(), [reference.pool]
            del reference
        elif role == "candidate":
            from .candidate import CandidateRole

            handlers = CandidateRole(device, channel=(fd_in, fd_out)).handlers()
        else:
            from .toolchain import ToolchainRole

            handlers = ToolchainRole().handlers()
        try:
            protocol.write_frame(fd_out, _hello(role, device, device_name))
        except OSError:
            return EXIT_CHANNEL_WRITE
        _log(f"{role} worker on {device} ({device_name}) ready")
        code, shutdown_job = _loop(role, handlers, fd_in, fd_out)
        ending = _clear_device(device, pools, exit_at_end)
    finally:  # before the shutdown's answer: the host ends the process once it has that
        if private_dir:
            shutil.rmtree(private_dir, ignore_errors=True)
    if shutdown_job is not None:
        ending["job"] = shutdown_job
        _send_quietly(fd_out, protocol.validate_reply(ending))
    if exit_at_end:  # the role's objects (the candidate's) are still alive: none of their code runs again
        _flush_std_streams()
        os._exit(code)
    return code


def _clear_device(device: str, pools: list, exiting: bool) -> dict:
    """Zeroes the device memory this process holds (scrub.zero_everything); where the process then
    exits, with automatic garbage collection and Python's hooks off first, so no finalizer or hook a
    candidate left runs while or after it is cleared. The shutdown.done reply (its job to be filled in)."""
    from . import scrub

    reply = {"type": "shutdown.done", "job": "", "zeroed_bytes": 0, "message": ""}
    started = time.perf_counter()
    try:
        if exiting:
            gc.disable()
            sys.setprofile(None)
            sys.settrace(None)
        reply["zeroed_bytes"] = scrub.zero_everything(device, pools)
    except BaseException as error:  # noqa: BLE001 - a sticky CUDA error, say: the worker ends all the same
        reply["message"] = f"zeroing the device memory failed: {exception_line(error)}"
    _log(f"zeroed {reply['zeroed_bytes']} bytes of device memory in {time.perf_counter() - started:.3f} s"
         + (f"; {reply['message']}" if reply["message"] else ""))
    return reply


def _loop(role: str, handlers: dict, fd_in: int, fd_out: int) -> tuple[int, str | None]:
    """Serves requests until the loop ends: (exit code, the shutdown request's job, or None when
    something else ended it)."""
    while True:
        try:
            message = protocol.read_frame(fd_in)
        except protocol.ProtocolError as error:
            _log(f"protocol error: {error}")
            if not _send_quietly(fd_out, protocol.error_reply("", f"protocol error: {error}")):
                return EXIT_CHANNEL_WRITE, None
            if error.fatal:
                return EXIT_PROTOCOL, None
            continue
        except OSError as error:
            _log(f"channel read failed: {error}")
            return EXIT_PROTOCOL, None
        if message is None:
            _log("end of input; exiting")
            return EXIT_OK, None
        started = time.perf_counter()
        kind = message.get("type")
        try:
            reply = handle_message(role, handlers, message)
        except ShutdownRequested as shutdown:
            _log("shutdown")
            return EXIT_OK, shutdown.job
        _flush_std_streams()
        _log(f"{kind} job={message.get('job', '')!r} -> {reply.get('type')} "
             f"in {time.perf_counter() - started:.3f} s")
        try:
            protocol.write_frame(fd_out, reply)
        except protocol.ProtocolError as error:
            if not _send_quietly(fd_out, protocol.error_reply(reply.get("job", ""), str(error))):
                return EXIT_CHANNEL_WRITE, None
        except OSError as error:
            _log(f"channel write failed: {error}")
            return EXIT_CHANNEL_WRITE, None


def _send_quietly(fd_out: int, message: Any) -> bool:
    try:
        protocol.write_frame(fd_out, message)
        return True
    except OSError:
        return False
