"""CPU placement of timed calls (cpus.py), checked in a child process whose affinity may change."""

import json
import os
import subprocess
import sys
import unittest

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = """
import json, os
from dicebench_harness import cpus
cpus.keep_off_reserved()
after_start = sorted(os.sched_getaffinity(0))
with cpus.on_timing_cpu():
    while_timing = sorted(os.sched_getaffinity(0))
print(json.dumps({"after_start": after_start, "while_timing": while_timing, "after": sorted(os.sched_getaffinity(0))}))
"""


def probe(environment: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICEBENCH_")}
    env.update(environment)
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=HARNESS, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@unittest.skipUnless(hasattr(os, "sched_getaffinity") and len(os.sched_getaffinity(0)) >= 2, "needs two CPUs and affinity")
class TimingCpuTest(unittest.TestCase):
    def test_workers_keep_off_the_reserved_cpu_and_time_on_it(self):
        allowed = sorted(os.sched_getaffinity(0))
        reserved = allowed[-1]
        seen = probe({"DICEBENCH_RESERVED_CPUS": str(reserved), "DICEBENCH_TIMING_CPU": str(reserved)})
        self.assertEqual(seen["after_start"], allowed[:-1])
        self.assertEqual(seen["while_timing"], [reserved])
        self.assertEqual(seen["after"], allowed[:-1])

    def test_without_reserved_cpus_nothing_moves(self):
        allowed = sorted(os.sched_getaffinity(0))
        self.assertEqual(probe({}), {"after_start": allowed, "while_timing": allowed, "after": allowed})


if __name__ == "__main__":
    unittest.main()
