"""dicebench.ray.EvaluatorPool on a local multi-node Ray cluster (ray.cluster_utils.Cluster) with CPU
actors: a batch with every failure kind gets the Judgements one local Evaluator gives, in input
order, shared over actors on two nodes; a node killed mid-batch loses nothing and judges nothing
twice (its tasks are judged by the other actor, and a replacement starts where there is room);
`dicebench run --ray` stores the rows a local run does, and resumes after being killed; `dicebench
serve --ray` answers as a local server does; a timed problem judged on two actors is timed once, the
other actor given that baseline.
Exits 77 (skipped) where Ray is not installed."""

import dataclasses
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest

try:
    import ray
    from ray.cluster_utils import Cluster
except ImportError:
    print("ray is not installed: skipped")
    sys.exit(77)

import dicebench
import dicebench.ray
from support import CLI, KERNELBENCH, cli
from test_judge import ADD, candidate
from test_judge import completion as judge_completion

TIMEOUT = 6.0  # a hang costs this much
BUDGET = 0.3  # seconds of timing per call site, where timed: the tests compare baselines, not times
SETTINGS = {"suite": "kernelbench-l1", "config": {"kernelbench.root": KERNELBENCH}, "timing": False,
            "timeout": TIMEOUT, "trials": 1, "workers": 1, "spares": 1}
EVERY_KIND = ["correct", "output_mismatch", "shape_mismatch", "runtime_error", "crashed", "timeout", "compile_failed",
              "no_model_new", "no_code_block"]


def completion(kind: str, problem: int, note: int) -> str:
    """What a policy writes for `problem`, failing in the way `kind` says (test_judge's candidates)."""
    if kind == "no_code_block":
        return f"attempt {note}: no code this time"
    return judge_completion(candidate(kind, problem), note)


def comparable(judgement: dicebench.Judgement) -> tuple:
    e = judgement.evaluation
    return (judgement.id, judgement.status, judgement.candidate, judgement.reward,
            e.verdict if e else None, e.error_class if e else None)


class PoolOnACluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The head takes no actor (it has no dicebench_cpu); node A has room for two, node B for one.
        cls.cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
        cls.node_a = cls.cluster.add_node(num_cpus=2, resources={"dicebench_cpu": 2})
        cls.node_b = cls.cluster.add_node(num_cpus=1, resources={"dicebench_cpu": 1})
        ray.init(address=cls.cluster.address, logging_level="ERROR", include_dashboard=False)
        cls.pool = dicebench.ray.EvaluatorPool("cpu", size=2, resource="dicebench_cpu", **SETTINGS)

    @classmethod
    def tearDownClass(cls):
        cls.pool.close()
        ray.shutdown()
        cls.cluster.shutdown()

    def test_1_every_failure_kind_as_one_local_evaluator_judges_it(self):
        # Every kind for problem 1, three for problem 2: two problems, so that affinity has a choice.
        items = [(1, completion(kind, 1, n)) for n, kind in enumerate(EVERY_KIND)]
        items += [(2, completion(kind, 2, n)) for n, kind in enumerate(["correct", "output_mismatch", "compile_failed"])]
        problems = [f"kernelbench/level1/{p}" for p, _ in items]
        ids = [f"item-{i}" for i in range(len(items))]
        judged = self.pool.judge(problems, [text for _, text in items], ids=ids, reward="correctness", zscore=1)
        # The actors spread over both nodes (SPREAD), and both judged.
        stats = self.pool.stats()
        self.assertEqual({s["node"] for s in stats}, {self.node_a.node_id, self.node_b.node_id}, stats)
        self.assertTrue(all(s["items_judged"] > 0 for s in stats), stats)
        self.assertEqual(sum(s["items_judged"] for s in stats), len(items))
        with dicebench.Evaluator("cpu", **SETTINGS) as local:
            expected = local.judge(problems, [text for _, text in items], ids=ids, reward="correctness", zscore=1)
        self.assertEqual([comparable(j) for j in judged], [comparable(j) for j in expected])
        verdicts = {j.evaluation.verdict for j in judged}
        self.assertEqual(verdicts, {"correct", "output_mismatch", "shape_mismatch", "runtime_error", "crashed",
                                    "timeout", "compile_failed", "extraction_failed"})

    def test_2_a_node_killed_mid_batch_loses_nothing_and_judges_nothing_twice(self):
        items = [(problem, completion("correct" if n % 3 else "output_mismatch", problem, n))
                 for n in range(6) for problem in (1, 2)]
        ids = [f"kill-{i}" for i in range(len(items))]
        on_b = [s for s in self.pool.stats() if s["alive"] and s["node"] == self.node_b.node_id]
        self.assertEqual(len(on_b), 1)
        before = {s["actor"]: s["items_judged"] for s in self.pool.stats()}
        outcome = {}

        def run():
            outcome["judged"] = self.pool.judge([f"kernelbench/level1/{p}" for p, _ in items], [t for _, t in items],
                                                ids=ids)

        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.pool.stats()[on_b[0]["actor"]]["in_flight"]:
            time.sleep(0.05)
        time.sleep(1.0)  # its task under way
        self.cluster.remove_node(self.node_b, allow_graceful=False)
        thread.join(timeout=300)
        self.assertFalse(thread.is_alive())
        judged = outcome["judged"]
        self.assertEqual([j.id for j in judged], ids)  # every item once, in input order
        self.assertEqual([j.status for j in judged], ["judged"] * len(items))
        self.assertEqual([j.evaluation.verdict for j in judged],
                         ["correct" if n % 3 else "output_mismatch" for n in range(6) for _ in (1, 2)])
        self.assertEqual(len(self.pool.failures), 1, self.pool.failures)
        lost = self.pool.failures[0]
        self.assertEqual(lost["node"], self.node_b.node_id)
        self.assertGreater(lost["items_judged_again"], 0)
        # Tasks that came back were counted once each: the items judged in this batch add up to the batch.
        stats = self.pool.stats()
        self.assertEqual(sum(s["items_judged"] for s in stats) - sum(before.values()), len(items), stats)
        self.assertEqual(len(stats), 3)  # a replacement was asked for, on node A (the room that is left)
        self.assertFalse(stats[on_b[0]["actor"]]["alive"])


    def test_3_the_trainer_adapters_judge_on_a_pool(self):
        # verl's compute_score with DICEBENCH_RAY_POOL: the adapters' judge is a pool on this cluster.
        self.cluster.add_node(num_cpus=1, resources={"dicebench_cpu": 1})
        from dicebench.trainers import _common, verl

        settings = _common.Settings.from_env({"DICEBENCH_RAY_POOL": "1", "DICEBENCH_DEVICE": "cpu",
                                               "DICEBENCH_SUITE": "kernelbench-l1",
                                               "DICEBENCH_EVALUATOR": json.dumps({
                                                   **{k: v for k, v in SETTINGS.items() if k != "suite"},
                                                   "resource": "dicebench_cpu"})})
        _common.configure(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)})
        try:
            judge = _common.shared_judge()
            self.assertIsInstance(judge, dicebench.ray.EvaluatorPool)
            rewards = verl.compute_score_batch(
                ["kernelbench"] * 2, [completion("correct", 1, 0), completion("output_mismatch", 1, 1)],
                ["kernelbench/level1/1"] * 2, [{}, {}])
            # Plain-PyTorch answers to a CUDA prompt: flagged backend_unused (reward 0), judged all the same.
            self.assertEqual([r["acc"] for r in rewards], [True, False])
            self.assertEqual(sum(s["items_judged"] for s in judge.stats()), 2)
        finally:
            _common.configure()

    def test_4_run_on_the_cluster_stores_what_a_local_run_does_and_resumes_after_a_kill(self):
        # `dicebench run --ray` against the same run judged here: the same rows; killed mid-run (the
        # host, and with it the bridge's actors), `run --resume --ray` finishes it, every sample once.
        self.pool.close()  # its actors' room goes to the run's pool
        # A hang per problem keeps the run going while it is killed.
        kinds = ["correct", "output_mismatch", "shape_mismatch", "timeout", "runtime_error", "compile_failed",
                 "no_code_block"]
        settings = ["--set", "eval.timing=off", "--set", "eval.trials=1", "--set", f"eval.timeout_s={TIMEOUT}"]
        on_ray = ["--ray", self.cluster.address, "--set", "eval.ray_actors=2", "--set", "eval.ray_resource=dicebench_cpu"]
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "replay")
            os.makedirs(folder)
            for problem in (1, 2):
                for sample, kind in enumerate(kinds):
                    with open(os.path.join(folder, f"level_1_problem_{problem}_sample_{sample}.txt"), "w") as f:
                        f.write(completion(kind, problem, sample))
            run = ["run", "--model", "replay:" + folder, "--suite", "kernelbench-l1", "--kernelbench-root", KERNELBENCH,
                   "--problems", "1,2", "--samples", str(len(kinds)), "--device", "cpu", *settings]
            local_db, ray_db = os.path.join(tmp, "local.db"), os.path.join(tmp, "ray.db")
            done = cli(*run, "--db", local_db, "--set", "eval.cpu_workers=2")  # where, not how: the same verdicts
            self.assertEqual(done.returncode, 0, done.stderr)
            # Killed once its first candidate is judged (the two without code are stored before any).
            started = subprocess.Popen([CLI, *run, "--db", ray_db, *on_ray], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and started.poll() is None and stored(ray_db) < 3:
                time.sleep(0.05)
            self.assertIsNone(started.poll(), "the run ended before it was killed")
            started.kill()
            started.wait()
            started.stderr.close()
            before = stored(ray_db)
            self.assertLess(before, 2 * len(kinds))
            done = cli("run", "--resume", "1", "--db", ray_db, *on_ray)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("judging on the Ray pool of 2 actor(s)", done.stderr)
            self.assertEqual(rows(ray_db), rows(local_db))
            self.assertEqual(len(rows(ray_db)), 2 * len(kinds))
            with sqlite3.connect(ray_db) as connection:  # nothing judged twice
                self.assertEqual(connection.execute("select count(*) from evaluations").fetchone()[0],
                                 2 * len(kinds))
                hosts = {h for (h,) in connection.execute(
                    "select json_extract(details, '$.host') from evaluations where status != 'extraction_failed'")}
            self.assertEqual(hosts, {socket.gethostname()})  # each record says where it was judged

    def test_5_serve_on_the_cluster_answers_as_a_local_server_does(self):
        # `dicebench serve --ray`: the same API, its items judged on the cluster's pool, stored.
        from test_serve import ADD, CORRECT, WRONG, Server

        self.pool.close()
        items = [{"id": "r-correct", "problem": ADD, "candidate": CORRECT},
                 {"id": "r-wrong", "problem": ADD, "candidate": WRONG},
                 {"id": "r-none", "problem": ADD, "completion": "no code this time"}]
        with tempfile.TemporaryDirectory() as tmp:
            server = Server(os.path.join(tmp, "serve.db"), "--ray", self.cluster.address, "--set",
                            "eval.ray_actors=2", "--set", "eval.ray_resource=dicebench_cpu", "--set",
                            "eval.cpu_workers=1")
            try:
                status, health, _ = server.call("GET", "/health", token=None)
                self.assertEqual(status, 200)
                self.assertIn("Ray pool of 2 actor(s)", health["ray_pool"])
                self.assertTrue(health["sandbox"]["protections"])  # the actors' sandbox report
                status, body, _ = server.call("POST", "/v1/evaluate/batch", {"items": items})
                self.assertEqual(status, 200, body)
                self.assertEqual([r["id"] for r in body["results"]], ["r-correct", "r-wrong", "r-none"])
                self.assertEqual([r["evaluation"]["verdict"] for r in body["results"]],
                                 ["correct", "output_mismatch", "extraction_failed"])
                self.assertEqual(body["results"][0]["evaluation"]["host"], socket.gethostname())
                # A repeated id is answered from the store, not judged again.
                status, again, _ = server.call("POST", "/v1/evaluate", items[0])
                self.assertEqual((status, again["evaluation"]["verdict"]), (200, "correct"))
                self.assertEqual(server.metric("dicebench_items_total", '{source="judged"}'), 3)
            finally:
                code = server.stop()
                text = server.text()
                server.log.close()
                self.assertEqual(code, 0, text)

    def test_6_a_baseline_one_actor_timed_is_given_to_the_other(self):
        # Timed: the first step's one item times problem 1's baseline on one actor; the next step's
        # items go to both actors (a task each, the warm one first), and the other one is given that
        # baseline instead of timing it. Both actors' speedups come from that one figure.
        self.pool.close()  # its room goes to this pool
        timed = {**SETTINGS, "timing": True, "timing_budget": BUDGET}
        steps = [["correct"], ["correct", "correct", "output_mismatch", "correct"]]
        codes = [[candidate(kind, 1) + f"# attempt {step}.{n}\n" for n, kind in enumerate(kinds)]
                 for step, kinds in enumerate(steps)]
        with dicebench.ray.EvaluatorPool("cpu", size=2, resource="dicebench_cpu", chunk=1, **timed) as pool:
            judged = [pool.judge(ADD, step, completions=False) for step in codes]
            stats = pool.stats()
        with dicebench.Evaluator("cpu", **timed) as local:
            expected = [local.judge(ADD, step, completions=False) for step in codes]
        self.assertEqual([[comparable(j) for j in step] for step in judged],
                         [[comparable(j) for j in step] for step in expected])
        self.assertEqual([j.evaluation.verdict for step in judged for j in step],
                         [kind for kinds in steps for kind in kinds])
        correct = [j.evaluation for step in judged for j in step if j.evaluation.correct]
        # One baseline figure for the problem on both actors, each speedup that figure over its runtime.
        self.assertEqual(len({e.baseline.median_ms for e in correct}), 1, [e.baseline for e in correct])
        for e in correct:
            self.assertEqual(e.speedup, e.baseline.median_ms / e.runtime.median_ms)
        # Timed once, by the actor that judged the first step (its records have the timing's stop
        # reason); the other judged in the second step with the baseline it was given (no stop
        # reason: a given baseline reads as a stored one).
        self.assertTrue(all(s["items_judged"] > 0 for s in stats), stats)
        self.assertEqual(sorted(s["baselines_timed"] for s in stats), [0, 1], stats)
        timer = next(s for s in stats if s["baselines_timed"])
        other = next(s for s in stats if not s["baselines_timed"])
        self.assertEqual((timer["baselines_given"], other["baselines_given"]), (0, 1), stats)
        self.assertNotEqual(judged[0][0].evaluation.baseline.stop_reason, "")
        given = [e for e in correct if e.baseline.stop_reason == ""]
        self.assertEqual(len(given), other["items_judged"], stats)


def stored(db: str) -> int:
    """Evaluations a run has stored so far (0 before its database exists)."""
    if not os.path.exists(db):
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as connection:
            return connection.execute("select count(*) from evaluations").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def rows(db: str) -> dict:
    """A run's stored verdicts, by (problem, sample)."""
    with sqlite3.connect(db) as connection:
        return {(p, s): status for p, s, status in connection.execute(
            "select s.problem_id, s.sample_index, e.status from samples s join evaluations e on e.sample = s.id")}


if __name__ == "__main__":
    unittest.main()
