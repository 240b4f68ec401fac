#!/usr/bin/env python3
"""A stand-in for `dicebench-worker --role toolchain` in tests of the toolchain pool: it speaks the
worker protocol (dicebench_harness.protocol) and "builds" without torch. Each build appends a line
to the file FAKE_TOOLCHAIN_LOG names, sleeps FAKE_TOOLCHAIN_SECONDS (default 0), then answers as
FAKE_TOOLCHAIN_OUTCOME says (and appends the request's niceness to that file's name + ".niceness"): "fail" (default; torch's error text), "build" (writes a module file of
a few bytes, or of FAKE_TOOLCHAIN_MODULE_BYTES) or "hang" (never answers). The environment reaches it through the host's own;
FAKE_TOOLCHAIN_SPEC_DIR is the build's folder of the generated dicebench_spec the protocol reads.
A toolchain.pch "makes" a precompiled header (a few bytes) keyed by the call's extra_cflags, and
appends its flags to FAKE_TOOLCHAIN_PCH_LOG; a build says it used one when its pch_dir holds the
header of its extra_cflags."""

import hashlib
import json

import os
import sys
import time


def header_key(call):
    return hashlib.sha256(json.dumps(call["arguments"].get("extra_cflags") or []).encode()).hexdigest()[:32]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "harness", "worker", "python"))
sys.path.insert(0, os.environ["FAKE_TOOLCHAIN_SPEC_DIR"])
from dicebench_harness import protocol  # noqa: E402

channel_in = os.dup(0)
channel_out = os.dup(1)
devnull = os.open(os.devnull, os.O_RDWR)
os.dup2(devnull, 0)
os.dup2(devnull, 1)
protocol.write_frame(channel_out, {"type": "hello", "protocol": protocol.PROTOCOL_VERSION, "role": "toolchain",
                                   "pid": os.getpid(), "python": "fake", "torch": "fake", "device": "cpu",
                                   "device_name": "cpu", "timer": "fake"})
while True:
    request = protocol.read_frame(channel_in)
    if request is None or request.get("type") == "shutdown":
        break
    if request["type"] == "toolchain.describe":
        protocol.write_frame(channel_out, {"type": "toolchain.described", "job": request["job"], "fingerprint": {"fake": 1}})
        continue
    if request["type"] == "toolchain.pch":
        with open(os.environ["FAKE_TOOLCHAIN_PCH_LOG"], "a") as log:
            log.write(json.dumps(request["call"]) + "\n")
        os.makedirs(os.path.join(request["build_dir"], "pch"))
        with open(os.path.join(request["build_dir"], "pch", "torch_extension.h.gch"), "wb") as header:
            header.write(b"fake precompiled header")
        protocol.write_frame(channel_out, {"type": "toolchain.pch_made", "job": request["job"], "ok": True, "message": "",
                                           "key": header_key(request["call"]), "seconds": 0.0})
        continue
    name = request["call"]["arguments"]["name"]
    with open(os.environ["FAKE_TOOLCHAIN_LOG"], "a") as log:
        log.write(name + "\n")
    with open(os.environ["FAKE_TOOLCHAIN_LOG"] + ".niceness", "a") as log:
        log.write(str(request.get("niceness", "unset")) + "\n")
    time.sleep(float(os.environ.get("FAKE_TOOLCHAIN_SECONDS", "0")))
    gate = os.environ.get("FAKE_TOOLCHAIN_GATE")  # the build ends once this file exists (120 s at most)
    waited = 0.0
    while gate and not os.path.exists(gate) and waited < 120:
        time.sleep(0.05)
        waited += 0.05
    outcome = os.environ.get("FAKE_TOOLCHAIN_OUTCOME", "fail")
    if outcome == "hang":
        time.sleep(3600)
    used = bool(request["pch_dir"]) and os.path.isfile(
        os.path.join(request["pch_dir"], header_key(request["call"]), "torch_extension.h.gch"))
    reply = {"type": "toolchain.built", "job": request["job"], "ok": False, "module_file": "", "seconds": 0.0,
             "pch_used": used,
             "message": f"RuntimeError: Error building extension '{name}': fake_error.cu(1): error: identifier \"x\" is undefined"}
    if outcome == "build":
        with open(os.path.join(request["build_dir"], name + ".so"), "wb") as module:
            module.write(b"\x7fELF fake module " + name.encode())
            if os.environ.get("FAKE_TOOLCHAIN_MODULE_BYTES"):  # a sparse file of that size
                module.truncate(int(os.environ["FAKE_TOOLCHAIN_MODULE_BYTES"]))
        reply.update(ok=True, message="", module_file=name + ".so")
    protocol.write_frame(channel_out, reply)
