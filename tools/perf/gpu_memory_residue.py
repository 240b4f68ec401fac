#!/usr/bin/env python3
"""What a later job can read of an earlier job's data in GPU memory, before and after the harness's
clearing (harness/README.md, "GPU memory between jobs"; dicebench_harness/scrub.py).

usage: gpu_memory_residue.py [--build DIR] [--mib N] [--scan-mib N] [--json FILE]

Each case writes --mib MiB of a recognisable 8-byte word, lets go of it as the harness would, then
reads memory the way a later job's candidate could and counts the bytes still holding that word:
  (a) another process after exit: one process fills and exits (after scrub.zero_everything, as a
      worker does on shutdown, with the clearing on); a fresh process allocates --scan-mib MiB of
      uninitialised memory (torch.empty, all the free memory but 1 GiB by default) and scans it;
  (b) the same process, allocator reuse: filled, freed, allocated again with torch.empty (the
      allocator hands the block out again; scrub.zero_free_blocks between, with the clearing on);
  (b') the same process after empty_cache: as (b) with torch.cuda.empty_cache() between (the
      driver gets the memory back; scrub.release_cached instead, with the clearing on);
  (c) the reference worker's export pool through CUDA IPC: a reference (dicebench_harness's
      ReferenceRole, in a process of its own) serves job 1 (inputs of --mib MiB) and then job 2
      (8 MiB); this process opens job 2's IPC handle as a candidate does and scans the whole mapping
      it gets. Without the clearing, reference.release only empties torch's cache (the code before
      scrub.py): that is the row "off".
Each case runs in fresh processes. Prints a table and writes JSON (--json). On a machine without a
CUDA device it says so and exits 0.

Run from a checkout with the worker's module built (--build, default build/: dicebench_cuda and the
generated dicebench_spec in build/lib/dicebench/python), with the project's Python (torch).
"""

from __future__ import annotations

import argparse
import base64
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import textwrap
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MiB = 1 << 20
MARK = 0x5EC2E7A1D1CEBE4C  # the earlier job's 8-byte word
SMALL_MARK = 0x2B0B2B0B1A1A1A1A  # the later job's (case c)
CHUNK = 256 * MiB


def use_build(build: str) -> None:
    """The harness's Python (each concern's python/ folder) and the build's modules on sys.path."""
    for folder in [os.path.join(build, "lib", "dicebench", "python")] + [
            os.path.join(ROOT, "harness", concern, "python") for concern in ("fastpath", "timing", "worker")]:
        if folder not in sys.path:
            sys.path.insert(0, folder)


def count_mark(data: Any, mark: int) -> int:
    """Bytes of `data` (a uint8 CUDA tensor) that hold the 8-byte word `mark`, at 8-byte offsets."""
    import torch

    found = 0
    usable = data.numel() // 8 * 8
    for start in range(0, usable, CHUNK):
        words = data[start:min(start + CHUNK, usable)].view(torch.int64)
        found += int((words == mark).sum().item()) * 8
    return found


def fill(nbytes: int) -> Any:
    import torch

    return torch.full((nbytes // 8,), MARK, dtype=torch.int64, device="cuda")


# ------------------------------------------------------------------------------------------
# (a) another process after exit

def writer_process(build: str, nbytes: int, scrubbed: bool, done: Any) -> None:
    use_build(build)
    import torch

    from dicebench_harness import scrub

    kept = fill(nbytes)
    torch.cuda.synchronize()
    zeroed = scrub.zero_everything("cuda") if scrubbed else 0
    del kept
    done.send(zeroed)
    done.close()
    os._exit(0)  # as a worker ends: no finalization


def reader_process(build: str, scan_bytes: int, result: Any) -> None:
    use_build(build)
    import torch

    chunks, scanned, found = [], 0, 0
    while scanned < scan_bytes:
        size = min(CHUNK, scan_bytes - scanned)
        try:
            chunk = torch.empty(size, dtype=torch.uint8, device="cuda")
        except torch.cuda.OutOfMemoryError:
            break
        found += count_mark(chunk, MARK)
        chunks.append(chunk)  # kept: the next chunk is other memory
        scanned += size
    result.send({"scanned_bytes": scanned, "found_bytes": found})
    result.close()


def separate_process(context: Any, build: str, nbytes: int, scan_bytes: int, scrubbed: bool) -> dict:
    parent, child = context.Pipe()
    writer = context.Process(target=writer_process, args=(build, nbytes, scrubbed, child))
    writer.start()
    zeroed = parent.recv()
    writer.join(120)
    parent, child = context.Pipe()
    reader = context.Process(target=reader_process, args=(build, scan_bytes, child))
    reader.start()
    measured = parent.recv()
    reader.join(120)
    return {**measured, "zeroed_bytes": zeroed}


# ------------------------------------------------------------------------------------------
# (b) and (b') the same process

def same_process(build: str, nbytes: int, scrubbed: bool, empty_cache: bool, result: Any) -> None:
    use_build(build)
    import torch

    from dicebench_harness import scrub

    filled = fill(nbytes)
    address = filled.data_ptr()
    del filled
    zeroed = 0
    if empty_cache and scrubbed:
        zeroed = scrub.release_cached("cuda")
    elif empty_cache:
        torch.cuda.empty_cache()
    elif scrubbed:
        zeroed = scrub.zero_free_blocks("cuda")
    again = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    result.send({"scanned_bytes": nbytes, "found_bytes": count_mark(again, MARK),
                 "same_address": again.data_ptr() == address, "zeroed_bytes": zeroed})
    result.close()


def in_fresh_process(context: Any, target: Any, *args: Any) -> dict:
    parent, child = context.Pipe()
    process = context.Process(target=target, args=(*args, child))
    process.start()
    measured = parent.recv()
    process.join(120)
    return measured


# ------------------------------------------------------------------------------------------
# (c) the reference worker's export pool, read through CUDA IPC

def problem(mark: int, nbytes: int) -> str:
    return textwrap.dedent(f'''
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                return x.clone()


        def get_inputs():
            return [torch.full(({nbytes // 8},), {mark}, dtype=torch.int64)]


        def get_init_inputs():
            return []
    ''')


def reference_process(build: str, scrubbed: bool, channel: Any) -> None:
    """A reference role serving requests from `channel` until None; without the clearing, its
    release only empties torch's cache, as before scrub.py."""
    use_build(build)
    import torch

    from dicebench_harness import protocol, scrub
    from dicebench_harness.devices import open_device
    from dicebench_harness.reference import ReferenceRole

    if not scrubbed:
        def empty_cache_only(device: Any, pools: Any = ()) -> int:
            if torch.device(device).type == "cuda":
                torch.cuda.empty_cache()
            return 0

        scrub.release_cached = empty_cache_only
    private = tempfile.mkdtemp(prefix="dicebench-residue-reference-")
    handlers = ReferenceRole(open_device("cuda")[0], private).handlers()
    while (request := channel.recv()) is not None:
        try:
            channel.send(handlers[request["type"]](protocol.validate_request(request)))
        except Exception as error:  # noqa: BLE001 - said to the probe, which stops
            channel.send({"ok": False, "message": f"{type(error).__name__}: {error}"})
    shutil.rmtree(private, ignore_errors=True)
    scrub.zero_everything("cuda")
    channel.close()
    os._exit(0)


def export_pool(context: Any, build: str, nbytes: int, scrubbed: bool) -> dict:
    import dicebench_cuda
    import torch

    folder = tempfile.mkdtemp(prefix="dicebench-residue-")
    parent, child = context.Pipe()
    reference = context.Process(target=reference_process, args=(build, scrubbed, child))
    reference.start()

    def request(message: dict) -> dict:
        parent.send(message)
        reply = parent.recv()
        if reply.get("ok") is False:
            raise RuntimeError(f"the reference failed: {reply}")
        return reply

    def job(name: str, source: str) -> dict:
        work = os.path.join(folder, name)
        os.mkdir(work, 0o700)
        request({"type": "reference.prepare", "job": name, "problem_source": source, "device": "cuda",
                 "init_seed": 1, "work_dir": work})
        return request({"type": "reference.trial", "job": name, "trial": 0, "seed": 5})

    try:
        job("job1", problem(MARK, nbytes))
        request({"type": "reference.release", "job": "job1"})
        ready = job("job2", problem(SMALL_MARK, 8 * MiB))
        node = ready["inputs"]["tree"]["list"][0]["tensor"]
        device = torch.cuda.current_device()
        base, size = dicebench_cuda.ipc_open(base64.b64decode(node["handle"]), device)
        try:
            mapping = torch.as_tensor(_Mapped(base, size), device="cuda")
            measured = {"scanned_bytes": size, "found_bytes": count_mark(mapping, MARK),
                        "own_bytes": count_mark(mapping, SMALL_MARK)}
            del mapping
        finally:
            dicebench_cuda.ipc_close(base, device)
        request({"type": "reference.release", "job": "job2"})
    finally:
        parent.send(None)
        reference.join(120)
        shutil.rmtree(folder, ignore_errors=True)
    return measured


class _Mapped:
    def __init__(self, pointer: int, size: int):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (pointer, False),
                                         "version": 3, "stream": None}


# ------------------------------------------------------------------------------------------
def device_facts() -> dict:
    import torch

    facts = {"device_name": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as handle:
            facts["driver"] = handle.readline().strip()
    except OSError:
        facts["driver"] = None
    return facts


def write_json(path: str | None, document: dict) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build folder (default: build/)")
    parser.add_argument("--mib", type=int, default=1024, help="MiB of the earlier job's data (default 1024)")
    parser.add_argument("--scan-mib", type=int, default=0,
                        help="MiB a fresh process scans in case (a) (default: the free memory but 1 GiB)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    try:
        import torch

        available = torch.cuda.is_available()
    except ImportError:
        available = False
    if not available:
        print("gpu_memory_residue: no CUDA device visible (or no torch): nothing to probe")
        write_json(args.json, {"skipped": "no CUDA device visible", "rows": []})
        return 0
    use_build(os.path.abspath(args.build))
    try:
        import dicebench_cuda  # noqa: F401
        import dicebench_spec  # noqa: F401
    except ImportError as error:
        parser.error(f"{error}: build the worker's module first (ninja -C {args.build} dicebench_cuda "
                     "dicebench_spec_generated) or pass --build")
    build = os.path.abspath(args.build)
    nbytes = args.mib * MiB
    free, _ = torch.cuda.mem_get_info()
    scan_bytes = args.scan_mib * MiB if args.scan_mib else max(free - 1024 * MiB, nbytes)
    context = multiprocessing.get_context("spawn")
    cases = [
        ("a", "another process after exit", lambda on: separate_process(context, build, nbytes, scan_bytes, on)),
        ("b", "same process, allocator reuse", lambda on: in_fresh_process(context, same_process, build, nbytes, on, False)),
        ("b'", "same process, after empty_cache", lambda on: in_fresh_process(context, same_process, build, nbytes, on, True)),
        ("c", "reference export pool through IPC", lambda on: export_pool(context, build, nbytes, on)),
    ]
    rows = []
    for key, name, run in cases:
        for scrubbed in (False, True):
            began = time.perf_counter()
            measured = run(scrubbed)
            rows.append({"case": key, "name": name, "clearing": "on" if scrubbed else "off",
                         "written_bytes": nbytes, **measured, "seconds": round(time.perf_counter() - began, 2)})
    # zeroed: what the clearing reported zeroing ("-" where the probe cannot see it: the reference's
    # own releases in case (c)); 0 with the clearing on means it did nothing.
    print(f"{'case':<44} {'clearing':>8} {'written MiB':>12} {'zeroed MiB':>11} {'scanned MiB':>12} {'found MiB':>10}")
    for row in rows:
        zeroed = row.get("zeroed_bytes")
        print(f"({row['case']}) {row['name']:<39} {row['clearing']:>8} {row['written_bytes'] / MiB:>12.0f} "
              f"{'-' if zeroed is None else format(zeroed / MiB, '.0f'):>11} "
              f"{row['scanned_bytes'] / MiB:>12.0f} {row['found_bytes'] / MiB:>10.1f}")
    write_json(args.json, {**device_facts(), "mark": hex(MARK), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
