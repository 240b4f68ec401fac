#!/usr/bin/env python3
"""A stand-in worker that says hello (protocol SILENT_WORKER_PROTOCOL, role candidate) and then reads
every request and answers none, shutdown included, until it is killed: the host must not wait on it
longer than its shutdown grace (test_worker_ending.cpp)."""

import json
import os
import struct
import sys
import time

channel_out = os.dup(1)
devnull = os.open(os.devnull, os.O_RDWR)
os.dup2(devnull, 1)
hello = json.dumps({"type": "hello", "protocol": int(os.environ["SILENT_WORKER_PROTOCOL"]), "role": "candidate",
                    "pid": os.getpid(), "python": sys.version.split()[0], "torch": "none", "device": "cpu",
                    "device_name": "cpu", "timer": "none"}).encode()
os.write(channel_out, struct.pack("<I", len(hello)) + hello)
while os.read(0, 1 << 16):  # reads what comes (shutdown too) and says nothing
    pass
time.sleep(3600)  # the host closed the channel: still it only ends when killed
