"""The evaluate() benchmarks run on the CPU on small problems and report what they measured: the
throughput one (tools/perf/evaluate_throughput.py) the verdicts of every call and its
figures, the session parity one (session_parity.py) evaluate()'s batch beside `dicebench run` on
the same candidates, with the same verdicts, and the RL step one (rl_step_benchmark.py) a small step
through Evaluator.judge and `dicebench serve` with the same verdicts (DICE's path skipped, saying
why) and where its CPU time went, its task choice, and --merge; and the CPU sampler's kinds of process
(population_benchmark.ProcessCpu)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from support import CLI, KERNELBENCH, PROBLEM, read

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "perf", "evaluate_throughput.py")
PARITY = os.path.join(HERE, "..", "..", "tools", "perf", "session_parity.py")
RL_STEP = os.path.join(HERE, "..", "..", "tools", "perf", "rl_step_benchmark.py")


class ThroughputBenchmark(unittest.TestCase):
    def test_runs_on_the_cpu(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "throughput.json")
            done = subprocess.run([sys.executable, SCRIPT, "--kernelbench-root", KERNELBENCH, "--candidates",
                                   os.path.join(HERE, "candidates"), "--device", "cpu", "--passes", "1", "--threads", "2",
                                   "--workers", "2", "--json", out], capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out) as f:
                result = json.load(f)
        summary = result["summary"]
        self.assertEqual(summary["candidates"], 3)
        self.assertEqual(summary["verdicts"], {"correct": 2, "output_mismatch": 1})
        self.assertGreater(summary["candidates_per_minute"], 0)
        self.assertLess(summary["cached_latency_p50_us"], 50_000)
        self.assertIn("candidates/min", done.stdout)
        verdicts = {(c["candidate"], c["verdict"]) for c in result["calls"]}
        self.assertIn(("level_1_problem_2_sample_0_kernel.py", "output_mismatch"), verdicts)


class SessionParityBenchmark(unittest.TestCase):
    def test_runs_on_the_cpu(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "parity.json")
            done = subprocess.run([sys.executable, PARITY, "--kernelbench-root", KERNELBENCH, "--candidates",
                                   os.path.join(HERE, "candidates"), "--count", "5", "--device", "cpu", "--workers", "2",
                                   "--json", out], capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out) as f:
                result = json.load(f)
        self.assertEqual(result["candidates"], 5)
        self.assertEqual(result["verdicts_agreeing"], 5)
        self.assertEqual(result["evaluate"]["evaluators_started"], 2)  # once, for both batches
        self.assertGreater(result["ratio"], 0)
        self.assertIn("evaluate() / run per candidate", done.stdout)


# Tasks from the project's own problems, in the shape of DICE's RL set ({idx, level, pytorch_code}):
# two the candidate generator can wrap, one without get_init_inputs, one whose output is int64.
RELU_SQUARE = read(os.path.join(KERNELBENCH, "level1", "2_ReluSquare.py"))
RL_TASKS = (
    {"idx": 2, "level": 1, "pytorch_code": RELU_SQUARE},
    {"idx": 7, "level": 2, "pytorch_code": read(PROBLEM)},
    {"idx": 9, "level": 1, "pytorch_code": RELU_SQUARE.replace("def get_init_inputs", "def init_inputs")},
    {"idx": 11, "level": 1, "pytorch_code": RELU_SQUARE.replace('return torch.relu(x) ** self.config["power"]',
                                                                "return (x > 0).long()")},
)


class ProcessCpuKinds(unittest.TestCase):
    def test_what_a_toolchain_worker_starts_counts_as_its_builds_whatever_its_priority(self):
        sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "perf"))
        from population_benchmark import ProcessCpu

        busy = "import time\nwhile time.process_time() < 1.0: pass\n"  # a core-second, however busy the machine
        starter = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {busy!r}], check=True)\n"
        with ProcessCpu(interval=0.1) as cpu:  # a "toolchain worker" (by its --role) running a compiler
            subprocess.run([sys.executable, "-c", starter, "--role", "toolchain"], check=True)
        kinds = cpu.by_kind()
        self.assertGreater(kinds.get("toolchain builds", 0), 0.5, kinds)


class RlStepBenchmark(unittest.TestCase):
    TASKS = RL_TASKS

    def run_script(self, *args):
        done = subprocess.run([sys.executable, RL_STEP, *args], check=False, capture_output=True, text=True,
                              timeout=600)
        self.assertEqual(done.returncode, 0, done.stdout[-3000:] + done.stderr[-3000:])
        return done.stdout

    def test_chooses_tasks_the_generator_can_wrap(self):
        with tempfile.TemporaryDirectory() as folder:
            data, out = os.path.join(folder, "rl_set.json"), os.path.join(folder, "tasks.json")
            with open(data, "w") as f:
                json.dump(list(self.TASKS), f)
            self.run_script("--select-only", out, "--dice-data", data, "--tasks", "2", "--seed", "3")
            with open(out) as f:
                chosen = json.load(f)
        self.assertEqual(len(chosen["tasks"]), 2)
        self.assertIn("no get_inputs() or get_init_inputs()", chosen["rejected"])
        if chosen["checked"] == "cpu":  # torch in this Python: the problems ran, the int64 one is out
            self.assertEqual(sorted(t["idx"] for t in chosen["tasks"]), [2, 7])
            self.assertIn("output is int64, not float32", chosen["rejected"])

    def test_a_small_step_on_the_cpu(self):
        with tempfile.TemporaryDirectory() as folder:
            tasks, out = os.path.join(folder, "tasks.json"), os.path.join(folder, "step.json")
            with open(tasks, "w") as f:
                json.dump({"tasks": list(self.TASKS[:2]), "seed": 0}, f)
            stdout = self.run_script("--tasks-file", tasks, "--tasks", "2", "--responses", "1", "--hang", "0",
                                     "--device", "cpu", "--dicebench", CLI, "--timeout", "20", "--compile-timeout", "60",
                                     "--cpu-workers", "2", "--work", os.path.join(folder, "work"), "--json", out)
            with open(out) as f:
                report = json.load(f)
            merged = self.run_script("--merge", out, out)
        self.assertEqual([c["kind"] for c in report["candidates"]], ["correct", "wrong"])
        self.assertEqual(report["candidates"][0]["name"], "pop_l1_p2_s0")
        for path in ("in-process", "serve"):
            summary = report["stages"][path]["summary"]
            self.assertEqual((summary["candidates"], summary["judged"]), (2, 2), path)
            self.assertGreater(summary["makespan_s"], 0)
            self.assertEqual(sum(summary["verdicts"].values()), 2)
            self.assertTrue(all(i["latency_s"] for i in report["stages"][path]["items"]))
            # where the CPU went: the candidates' workers are found by their --role
            self.assertGreater(summary["cpu_by_kind"].get("worker candidate", 0), 0, summary["cpu_by_kind"])
            self.assertLessEqual(sum(summary["cpu_by_kind"].values()), summary["cpu_s"] * 1.05 + 1)
        self.assertEqual(report["comparison"]["path_disagreements"], [])
        self.assertIn("needs a GPU", report["stages"]["dice"]["summary"]["skipped"])
        self.assertIn("the issue's targets", stdout)
        self.assertIn("serve / in-process makespan", merged)


if __name__ == "__main__":
    unittest.main()
