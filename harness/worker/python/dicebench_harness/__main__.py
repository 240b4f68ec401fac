"""`python -m dicebench_harness --role reference|candidate --device cpu [--log FILE]`.

Does in Python what the C++ dicebench-worker does before calling serve(): duplicates fds 0 and 1
to private descriptors for the channel (not inherited by child processes), points fd 0 at
/dev/null and fds 1 and 2 at the log file (--log, default /dev/null), then runs
dicebench_harness.worker.serve, which ends the process with its code (os._exit, once the device
memory is cleared: worker.py). Tests use it to run real worker processes.
"""

from __future__ import annotations

import argparse
import os
import sys


def take_over_std_fds(log_path: str) -> tuple[int, int]:
    """Returns (fd_in, fd_out) of the channel; afterwards fd 0 reads /dev/null and fds 1 and 2
    write to log_path."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    fd_in = os.dup(0)  # os.dup makes non-inheritable descriptors
    fd_out = os.dup(1)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    os.close(null_fd)
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    return fd_in, fd_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dicebench_harness",
                                     description="Run a dicebench worker on stdin/stdout.")
    parser.add_argument("--role", required=True, choices=["reference", "candidate"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--log", default=os.devnull, help="log file for fds 1 and 2")
    args = parser.parse_args(argv)
    fd_in, fd_out = take_over_std_fds(args.log)
    from dicebench_harness.worker import serve

    return serve(args.role, args.device, fd_in, fd_out, exit_at_end=True)


if __name__ == "__main__":
    sys.exit(main())
