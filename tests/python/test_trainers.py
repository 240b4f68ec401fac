"""The RL trainer adapters (dicebench.trainers), each called as its trainer calls it: DICE's
evaluate_kernel_dataset fields compared with DICE's structure literally, verl's compute_score loaded
and wrapped by verl's own loader and awaited as its naive reward manager awaits it, TRL's reward
functions named and classed async by TRL's own helpers and called as GRPOTrainer._calculate_rewards
calls them, OpenRLHF's reward_func run by OpenRLHF's real SingleTurnAgentExecutor (execute() with
this file as --reward.remote_url, and its HTTP call to `dicebench serve`'s /v1/openrlhf), and
RemoteJudge against a real `dicebench serve` (and a stand-in for the refusals and retries a real one
seldom gives). DICE (its adapter's own Evaluator) and verl (an Evaluator with a suite, raw
completions) run on real Evaluators on the CPU; the rest on a stand-in judge, for speed.

The trainers' own code comes from their wheels, which tools/bootstrap.sh downloads (not installs:
their dependencies are GPU stacks) into <build>/rl-wheels (or $DICEBENCH_RL_WHEELS), with aiohttp
installed for OpenRLHF's executor (tools/requirements-rl.txt); the few stdlib-only functions needed
are taken out of the wheel's source by name, or (OpenRLHF's executor, which imports only aiohttp)
imported from the unpacked wheel. Without the wheels those cases are skipped; the same calls written
out here (each naming the trainer's file and function) still run."""

import ast
import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import glob
import http.server
import importlib
import importlib.util
import inspect
import json
import os
import pathlib
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
import typing
import unittest
import zipfile

import dicebench
from dicebench.trainers import RemoteError, RemoteJudge, Settings, _common, configure
from dicebench.trainers import dice as dice_adapter
from dicebench.trainers import openrlhf as openrlhf_adapter
from dicebench.trainers import trl as trl_adapter
from dicebench.trainers import verl as verl_adapter
from support import CLI, KERNELBENCH, read

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tools" / "examples" / "rl"
BUDGET = 0.3  # seconds of timing per call site: verdicts matter here, not times
TIMEOUT = 4.0  # what a hanging candidate costs
ADD = "kernelbench/level1/1"  # x + y, in support's tiny KernelBench tree
ADD_SOURCE = read(os.path.join(KERNELBENCH, "level1", "1_Add.py"))


def model_new(body: str) -> str:
    return ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n\n    def forward(self, x, y):\n        {body}\n")


CORRECT = model_new("return torch.add(x, y)")
WRONG = model_new("return x - y")
BROKEN = "import torch\n\nclass ModelNew(torch.nn.Module)\n    pass\n"
HANGS = model_new("while True:\n            pass")
RAISES = model_new("raise RuntimeError('not yet')")


def with_cuda_path(args: str, expression: str) -> str:
    """A ModelNew with a CUDA path (load_inline of a __global__ kernel, which the suite's review asks
    a CUDA answer for) taken only for CUDA inputs, and torch's own on the CPU, where these tests run."""
    first = args.split(",")[0]
    return ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n\n"
            'KERNEL = "__global__ void k(const float* x, float* out, int n) { out[0] = x[0]; }"\n\n\n'
            "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
            f"    def forward(self, {args}):\n        if {first}.is_cuda:\n"
            '            return load_inline(name="k", cpp_sources="", cuda_sources=KERNEL, functions=["k"]).k(x)\n'
            f"        return {expression}\n")


CUDA_ADD = with_cuda_path("x, y", "torch.add(x, y)")


def completion(code: str) -> str:
    return f"Here is my kernel.\n\n```python\n{code}```\n\nIt is faster.\n"


# ---------------------------------------------------------------------------------------------------
# A stand-in judge: verdicts by a word in the response, a problem "BROKEN" that cannot be used.

STAND_IN = {
    "CORRECT": {"verdict": "correct", "correct": True, "compiled": True, "speedup": 1.5},
    "WRONG": {"verdict": "output_mismatch", "correct": False, "compiled": True, "max_abs_diff": 0.5,
              "mean_abs_diff": 0.125, "error_message": "outputs differ"},
    "RAISES": {"verdict": "runtime_error", "correct": False, "compiled": True, "error_message": "RuntimeError: no"},
    "SYNTAX": {"verdict": "compile_failed", "correct": False, "compiled": False, "error_message": "SyntaxError"},
    "HANGS": {"verdict": "timeout", "correct": False, "compiled": True, "error_message": "ran past 4 s"},
    "CRASH": {"verdict": "crashed", "correct": False, "compiled": True, "error_message": "SIGSEGV"},
    "ALIASES": {"verdict": "correct", "correct": True, "compiled": True, "speedup": 9.0,
                "flags": {"output_aliases_input": "output 0 is input 0"}},
}


def stand_in_judgement(problem: str, response: str, completions: bool, item_id: str, reward: str | None,
                       params: dict) -> dicebench.Judgement:
    data = {"id": item_id, "problem": problem, "completion": response if completions else None,
            "candidate": None if completions else response, "reward_shape": reward or "",
            "reward_params": dict(params) if reward else {}, "reward": None, "evaluation": None, "error": ""}
    if problem == "BROKEN":
        return dicebench.Judgement.from_json({**data, "status": "problem_failed", "error": "the reference raised"})
    word = next((w for w in STAND_IN if w in response), None)
    evaluation = {"device": "cpu", "flags": {}, "error_message": "", **(STAND_IN[word] if word else {
        "verdict": "extraction_failed" if completions else "compile_failed", "correct": False, "compiled": False})}
    if reward is not None:  # the stand-in's own reward: 1 or 0 (7 for speedup, to tell shapes apart)
        good = evaluation["correct"] and not evaluation["flags"]
        data["reward"] = (7.0 if reward == "speedup" else 1.0) if good else 0.0
    return dicebench.Judgement.from_json({**data, "status": "judged", "evaluation": evaluation})


class StandInJudge:
    """judge() as dicebench.Evaluator's, recording its calls."""

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()

    def judge(self, problems, responses, *, completions=True, ids=None, reward=None, **reward_params):
        responses = list(responses)
        problems = [problems] * len(responses) if isinstance(problems, str) else list(problems)
        ids = [""] * len(responses) if ids is None else list(ids)
        with self.lock:
            self.calls.append({"problems": problems, "responses": responses, "completions": completions,
                               "reward": reward, "params": reward_params})
        return [stand_in_judgement(p, r, completions, i, reward, reward_params) for p, r, i in zip(problems, responses, ids)]


# ---------------------------------------------------------------------------------------------------
# The trainers' code, from their wheels.

def absent(what: str) -> Exception:
    """Where the trainers' code is missing: a skip on a machine without the network, a failure in
    CI (CI=true), where tools/bootstrap.sh must have fetched it."""
    return AssertionError(what) if os.environ.get("CI") else unittest.SkipTest(what)


def wheel(name: str) -> str | None:
    """The wheel of `name` at the version tools/requirements-rl.txt pins, where bootstrap put it."""
    with open(ROOT / "tools" / "requirements-rl.txt", encoding="utf-8") as f:
        pins = dict(line.strip().split("==") for line in f if "==" in line and not line.startswith("#"))
    folder = os.environ.get("DICEBENCH_RL_WHEELS") or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(CLI))),
                                                                   "rl-wheels")
    found = glob.glob(os.path.join(folder, f"{name}-{pins[name]}-*.whl"))
    return found[0] if found else None


def functions_from(name: str, member: str, names: set[str], namespace: dict) -> dict:
    """The top-level functions and assignments called `names` in `member` of the wheel `name`,
    executed alone (they use only what `namespace` gives: the standard library)."""
    path = wheel(name)
    if path is None:
        raise absent(f"no {name} wheel: tools/bootstrap.sh downloads it (tools/requirements-rl.txt)")
    with zipfile.ZipFile(path) as z:
        source = z.read(member).decode()
    keep = [node for node in ast.parse(source).body
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names)
            or (isinstance(node, ast.Assign) and any(getattr(t, "id", None) in names for t in node.targets))]
    missing = names - {getattr(n, "name", None) or n.targets[0].id for n in keep}
    if missing:
        raise AssertionError(f"{name}'s {member} no longer defines {sorted(missing)}: check the adapter against it")
    exec(compile(ast.Module(body=keep, type_ignores=[]), f"{path}/{member}", "exec"), namespace)
    return namespace


@contextlib.contextmanager
def stub_modules(**modules: types.ModuleType):
    """sys.modules entries for a while (a package's heavy __init__ replaced), then as they were."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def package(name: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []
    module.__dict__.update(attributes)
    return module


_openrlhf_dir = None


def openrlhf_agent():
    """openrlhf/utils/agent.py of the wheel, imported with its package's heavy utils/__init__ (torch,
    transformers) left out: it needs only aiohttp and openrlhf/utils/logging_utils.py."""
    global _openrlhf_dir
    path = wheel("openrlhf")
    if path is None:
        raise absent("no openrlhf wheel: tools/bootstrap.sh downloads it (tools/requirements-rl.txt)")
    if importlib.util.find_spec("aiohttp") is None:
        raise absent("no aiohttp, which OpenRLHF's executor imports: tools/bootstrap.sh installs it")
    if _openrlhf_dir is None:
        _openrlhf_dir = tempfile.mkdtemp(prefix="dicebench-openrlhf-")
        atexit.register(shutil.rmtree, _openrlhf_dir, True)
        with zipfile.ZipFile(path) as z:
            for member in z.namelist():
                inside = member.split("/purelib/", 1)[-1]  # platform wheels keep the package under .data/purelib
                if inside.startswith("openrlhf/") and inside.endswith(".py"):
                    target = os.path.join(_openrlhf_dir, inside)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with open(target, "wb") as f:
                        f.write(z.read(member))
        sys.path.insert(0, _openrlhf_dir)
        import openrlhf

        sys.modules["openrlhf.utils"] = package("openrlhf.utils")
        sys.modules["openrlhf.utils"].__path__ = [os.path.join(os.path.dirname(openrlhf.__file__), "utils")]
    return importlib.import_module("openrlhf.utils.agent")


# ---------------------------------------------------------------------------------------------------
# A stand-in for `dicebench serve`.

class StandIn:
    """A stand-in for `dicebench serve`'s POST /v1/evaluate/batch (core/serve/reward_service.cpp),
    answering with a judge's judgements: first the statuses of `refusals` (with Retry-After: 0),
    then `running` answers 202 (not judged within timeout_s), then 200 with the results; 413 beyond
    max_batch items, as the server words it."""

    def __init__(self, judge, *, refusals=(), token=None, reverse=False, running=0, max_batch=None):
        self.judge, self.refusals, self.token, self.reverse = judge, list(refusals), token, reverse
        self.running, self.max_batch = running, max_batch
        self.requests = []
        service = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                service.requests.append((self.path, dict(self.headers), body))
                if service.refusals:
                    return self.answer(service.refusals.pop(0), {"error": "busy"}, {"Retry-After": "0"})
                if service.token and self.headers.get("Authorization") != f"Bearer {service.token}":
                    return self.answer(401, {"error": "this server needs its bearer token"})
                if self.path != "/v1/evaluate/batch":
                    return self.answer(404, {"error": f"no route POST {self.path}"})
                items, reward = body["items"], body.get("reward") or {}
                if service.max_batch and len(items) > service.max_batch:
                    return self.answer(413, {"error": f"{len(items)} items in one request; at most {service.max_batch}"})
                if reward.get("shape") not in (None, *dicebench.REWARD_SHAPES):
                    return self.answer(400, {"error": f"no reward shape {reward['shape']!r}"})
                job = {"job": f"job-{len(service.requests)}", "total": len(items)}
                if service.running:
                    service.running -= 1
                    return self.answer(202, {**job, "status": "running", "done": 0})
                completions = "completion" in items[0]
                judged = service.judge.judge([i["problem"] for i in items],
                                             [i["completion" if completions else "candidate"] for i in items],
                                             completions=completions, ids=[i["id"] for i in items],
                                             reward=reward.get("shape"), **reward.get("params", {}))
                results = [j.to_dict() for j in judged]
                return self.answer(200, {**job, "status": "done", "done": len(items),
                                         "results": results[::-1] if service.reverse else results})

            def answer(self, status, data, headers=None):
                out = json.dumps(data).encode()
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Serve:
    """A real `dicebench serve` on the CPU on a free loopback port (kernelbench-l1 of support's tree,
    whose prompts ask for CUDA), without a token (the stand-in checks that the client sends one)."""

    def __init__(self, db: str):
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - the server's log, open while it runs
        self.process = subprocess.Popen(
            [CLI, "serve", "--port", "0", "--db", db, "--device", "cpu", "--suite", "kernelbench-l1",
             "--set", f"kernelbench.root={KERNELBENCH}", "--set", "eval.cpu_workers=2",
             "--set", f"eval.timing_budget_s={BUDGET}", "--set", "eval.timeout_s=30"],
            stdout=self.log, stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if k != "DICEBENCH_SERVE_TOKEN"})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.text())
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}"
                return
            if self.process.poll() is not None:
                raise AssertionError(f"dicebench serve ended: {self.text()}")
            time.sleep(0.1)
        self.stop()
        raise AssertionError(f"dicebench serve did not listen: {self.text()}")

    def text(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=300)
        if code != 0:
            print(self.text(), file=sys.stderr)
        self.log.close()
        return code


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Adapter(unittest.TestCase):
    def tearDown(self):
        configure()  # the environment's settings again; batchers closed


# ---------------------------------------------------------------------------------------------------

class Remote(Adapter):
    def test_judgements_round_trip_with_token_and_retries(self):
        judge = StandInJudge()
        service = StandIn(judge, refusals=[429, 503], token="s3cret", running=1)
        try:
            client = RemoteJudge(service.url + "/", token="s3cret", backoff=0.01)
            got = client.judge(["P1", "BROKEN", "P1"], ["CORRECT", "CORRECT", "WRONG"], reward="correct_plus_speedup",
                               correct_weight=0.5)
        finally:
            service.close()
        expected = [stand_in_judgement(p, r, True, j.id, "correct_plus_speedup", {"correct_weight": 0.5})
                    for p, r, j in zip(["P1", "BROKEN", "P1"], ["CORRECT", "CORRECT", "WRONG"], got)]
        self.assertEqual([j.to_dict() for j in got], [j.to_dict() for j in expected])
        self.assertEqual([j.status for j in got], ["judged", "problem_failed", "judged"])
        self.assertEqual(len(service.requests), 4)  # 429, 503 (Retry-After: 0), 202 (still judging), the answer
        paths = {path for path, _, _ in service.requests}
        self.assertEqual(paths, {"/v1/evaluate/batch"})
        bodies = [body for _, _, body in service.requests]
        self.assertEqual(bodies[0], bodies[3])  # the same ids again: the service answers them from its store
        self.assertEqual(len({item["id"] for item in bodies[0]["items"]}), 3)
        self.assertEqual(bodies[0]["reward"], {"shape": "correct_plus_speedup", "params": {"correct_weight": 0.5}})
        self.assertEqual(bodies[0]["timeout_s"], 300.0)
        self.assertEqual(set(bodies[0]["items"][0]), {"id", "problem", "completion"})
        self.assertEqual(service.requests[3][1]["Authorization"], "Bearer s3cret")

    def test_candidates_ids_order_and_parts(self):
        judge = StandInJudge()
        service = StandIn(judge, reverse=True)
        try:
            client = RemoteJudge(service.url, max_items=2)
            got = client.judge("P", ["CORRECT", "SYNTAX", "WRONG"], completions=False, ids=["a", "b", "c"])
            with self.assertRaises(ValueError):  # a group normalised over the whole call cannot be cut up
                client.judge("P", ["CORRECT"] * 3, reward="correctness", zscore=1)
        finally:
            service.close()
        self.assertEqual([j.id for j in got], ["a", "b", "c"])  # answered reversed, given back in order
        self.assertEqual([j.evaluation.verdict for j in got], ["correct", "compile_failed", "output_mismatch"])
        self.assertEqual([len(body["items"]) for _, _, body in service.requests], [2, 1])
        self.assertEqual(set(service.requests[0][2]["items"][0]), {"id", "problem", "candidate"})
        self.assertNotIn("reward", service.requests[0][2])
        # A server that takes fewer items a request (413) gets the call in parts of its limit.
        service = StandIn(StandInJudge(), max_batch=2)
        try:
            got = RemoteJudge(service.url).judge("P", ["CORRECT", "WRONG", "CORRECT"])
        finally:
            service.close()
        self.assertEqual([j.evaluation.verdict for j in got], ["correct", "output_mismatch", "correct"])
        self.assertEqual([len(body["items"]) for _, _, body in service.requests], [3, 2, 1])

    def test_refusals_and_an_absent_service_raise(self):
        service = StandIn(StandInJudge(), token="right")
        try:
            with self.assertRaises(RemoteError) as raised:
                RemoteJudge(service.url, token="wrong").judge("P", ["x"])
            self.assertIn("401", str(raised.exception))
            self.assertIn("needs its bearer token", str(raised.exception))
            with self.assertRaises(RemoteError) as raised:
                RemoteJudge(service.url, token="right").judge("P", ["x"], reward="fastest")
            self.assertIn("no reward shape 'fastest'", str(raised.exception))
            self.assertEqual(len(service.requests), 2)  # neither retried
        finally:
            service.close()
        with self.assertRaises(RemoteError) as raised:
            RemoteJudge(f"http://127.0.0.1:{closed_port()}", retries=1, backoff=0.01).judge("P", ["x"])
        self.assertIn("could not be reached (2 tries)", str(raised.exception))
        self.assertIsInstance(raised.exception, dicebench.Error)

    def test_settings_from_the_environment(self):
        settings = Settings.from_env({"DICEBENCH_URL": "http://reward:8000", "DICEBENCH_TOKEN": "t",
                                      "DICEBENCH_REWARD": "correct_plus_speedup",
                                      "DICEBENCH_REWARD_PARAMS": "correct_weight=0.5, cap=4",
                                      "DICEBENCH_CONFIG": '{"kernelbench.backend": "triton"}',
                                      "DICEBENCH_EVALUATOR": '{"timeout": 60}', "DICEBENCH_BATCH_WINDOW_MS": "5"})
        self.assertEqual(settings.reward_params, {"correct_weight": 0.5, "cap": 4.0})
        self.assertEqual(settings.config, {"kernelbench.backend": "triton"})
        self.assertEqual((settings.evaluator, settings.batch_window), ({"timeout": 60}, 0.005))
        judge = settings.make_judge()
        self.assertIsInstance(judge, RemoteJudge)
        self.assertEqual((judge.url, judge.token), ("http://reward:8000/v1/evaluate/batch", "t"))
        self.assertEqual(Settings().for_completions().suite, "kernelbench")
        with self.assertRaises(ValueError):
            Settings.from_env({"DICEBENCH_REWARD": "fastest"})
        with self.assertRaises(ValueError):
            Settings.from_env({"DICEBENCH_REWARD": "speedup", "DICEBENCH_REWARD_PARAMS": "correct_weight=1"})


# ---------------------------------------------------------------------------------------------------

class Dice(Adapter):
    def test_fields_as_dice_fills_them(self):
        broken_problem = ADD_SOURCE.replace("return [torch.rand(16, 32), torch.rand(16, 32)]", "raise RuntimeError('no')")
        data = [
            {"idx": 7, "pytorch_code": ADD_SOURCE, "extracted_output": [CORRECT, WRONG, BROKEN, HANGS, RAISES],
             "prompt": "kept"},
            {"idx": 8, "pytorch_code": broken_problem, "extracted_output": [CORRECT]},
            {"idx": 9, "pytorch_code": ADD_SOURCE, "extracted_output": [], "step_map": [[1, 2]]},
        ]
        # The adapter's own Evaluator, as DICE's rl_execute_kernel.py main() calls it (no judge given).
        configure(device="cpu", evaluator={"workers": 2, "timeout": TIMEOUT})
        out = dice_adapter.evaluate_kernel_dataset(data, eval_gpu_id=0, timeout=300, flag="train")
        self.assertIs(out, data)  # in place, as DICE's
        own = _common.shared_judge(dice_adapter.dice_settings(300))
        self.assertIsInstance(own, dicebench.Evaluator)
        self.assertEqual(own.suite, "")  # candidate code against sources: no suite, no review (DICE has none)
        first, second, third = data
        # DICE's structure (rl_execute_kernel.py L431-436, L478-490): one one-element list per candidate.
        self.assertEqual(first["compiled"], [[True], [True], [False], [False], [True]])
        self.assertEqual(first["correctness"], [[True], [False], [False], [False], [False]])
        self.assertEqual(first["step_map"], [])
        self.assertEqual((first["idx"], first["prompt"]), (7, "kept"))
        self.assertTrue(all(type(x[0]) is bool for x in first["compiled"] + first["correctness"]))
        results = [x[0] for x in first["execution_result"]]
        self.assertTrue(all(len(x) == 1 for x in first["execution_result"]))
        # What DICE's child prints when it got a result: compiled, correctness, runtime, metadata.
        self.assertEqual(set(results[0]), {"compiled", "correctness", "runtime", "metadata"})
        self.assertEqual((results[0]["compiled"], results[0]["correctness"], results[0]["runtime"]), (True, True, -1.0))
        self.assertEqual(results[0]["metadata"]["device"], "cpu")
        self.assertEqual(results[0]["metadata"]["dicebench_verdict"], "correct")
        self.assertNotIn("dicebench_speedup", results[0]["metadata"])  # not timed: correctness alone
        self.assertEqual(results[1]["correctness"], False)
        self.assertEqual(results[1]["metadata"]["correctness_issue"], "Output mismatch")
        self.assertEqual(len(results[1]["metadata"]["max_difference"]), 1)
        self.assertIn("not yet", results[4]["metadata"]["runtime_error"])
        # What DICE's parent records when the child printed none: compiled, correctness, error.
        self.assertEqual(set(results[2]), {"compiled", "correctness", "error"})
        self.assertTrue(results[2]["error"].startswith("compile_failed"))
        self.assertEqual(results[3], {"compiled": False, "correctness": False, "error": "Timeout"})
        self.assertEqual(second["compiled"], [[False]])
        self.assertEqual(second["correctness"], [[False]])
        [[failed]] = second["execution_result"]
        self.assertEqual(set(failed), {"compiled", "correctness", "error"})
        self.assertTrue(failed["error"].startswith("problem_failed: "), failed["error"])
        self.assertEqual((third["execution_result"], third["compiled"], third["correctness"], third["step_map"]),
                         ([], [], [], [[1, 2]]))
        json.dumps(data)  # DICE writes the items back as JSON

    def test_judged_as_candidates_with_the_correctness_reward(self):
        judge = StandInJudge()
        data = [{"pytorch_code": "P", "extracted_output": ["CORRECT", "ALIASES", None]}]
        dice_adapter.evaluate_kernel_dataset(data, judge=judge)
        [call] = judge.calls
        self.assertEqual((call["completions"], call["reward"], call["params"]), (False, "correctness", {}))
        self.assertEqual(call["responses"], ["CORRECT", "ALIASES", ""])
        # A flag that zeroes the reward (an output aliasing an input) is not counted correct.
        self.assertEqual(data[0]["correctness"], [[True], [False], [False]])
        self.assertEqual(data[0]["execution_result"][1][0]["correctness"], True)
        self.assertEqual(data[0]["execution_result"][1][0]["metadata"]["dicebench_flags"],
                         {"output_aliases_input": "output 0 is input 0"})

    def test_a_failure_to_evaluate_at_all_marks_every_candidate(self):
        data = [{"pytorch_code": "P", "extracted_output": ["CORRECT", "WRONG"]}]
        absent = RemoteJudge(f"http://127.0.0.1:{closed_port()}", retries=0)
        dice_adapter.evaluate_kernel_dataset(data, judge=absent)
        self.assertEqual(data[0]["compiled"], [[False], [False]])
        self.assertEqual(data[0]["correctness"], [[False], [False]])
        for [result] in data[0]["execution_result"]:
            self.assertEqual(set(result), {"compiled", "correctness", "error"})
            self.assertIn("could not be reached", result["error"])

    def test_its_own_evaluator_checks_as_dice_does(self):
        settings = dice_adapter.dice_settings(300)
        self.assertEqual(settings.evaluator, {"trials": 1, "tolerance": "uniform", "timeout": 300.0,
                                              "compile_timeout": 300.0, "timing": False})  # DICE times nothing
        configure(evaluator={"timeout": 30, "gpus": "0"})
        self.assertEqual(dice_adapter.dice_settings(300).evaluator["timeout"], 30)
        self.assertEqual(dice_adapter.dice_settings(300).evaluator["gpus"], "0")

    def test_rewards_z_scored_by_dicebench(self):
        judge = StandInJudge()
        data = [{"pytorch_code": "P", "extracted_output": ["CORRECT", "WRONG"]}, {"pytorch_code": "BROKEN",
                                                                                 "extracted_output": ["CORRECT"]}]
        rewards = dice_adapter.dice_rewards(data, judge=judge)
        [call] = judge.calls
        self.assertEqual((call["completions"], call["reward"], call["params"]), (False, "correctness", {"zscore": 1}))
        self.assertEqual(rewards, [[1.0, 0.0], [None]])  # the stand-in's rewards, as given


# ---------------------------------------------------------------------------------------------------

def verl_get_custom_reward_fn(path: str, name: str, reward_kwargs: dict | None = None, *, real: bool = False):
    """verl 0.9.1's own verl/trainer/ppo/reward.py::get_custom_reward_fn, with its import of
    verl/utils/import_utils.py::load_extern_object answered by that file's own functions. Without
    the wheel (real=False), what they do, written out: pkg://a.b imported, a path loaded by
    spec_from_file_location under a name of its own, the function wrapped to merge reward_kwargs
    over the call's keywords, async where the function is."""
    try:
        loader = functions_from("verl", "verl/utils/import_utils.py",
                                {"load_module", "load_extern_object", "PKG_PATH_PREFIX", "FILE_PATH_PREFIX"},
                                {"os": os, "importlib": importlib, "Optional": typing.Optional})
        reward = functions_from("verl", "verl/trainer/ppo/reward.py",
                                {"_call_with_kwargs", "_call_with_kwargs_async", "get_custom_reward_fn"},
                                {"inspect": inspect, "partial": functools.partial, "Optional": typing.Optional,
                                 "DictConfig": dict, "RawRewardFn": object})
    except unittest.SkipTest:
        if real:
            raise
        if path.startswith("pkg://"):
            module = importlib.import_module(path[len("pkg://"):].replace("/", "."))
        else:
            spec = importlib.util.spec_from_file_location(f"custom_module_{hash(os.path.abspath(path))}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        raw, merged = getattr(module, name), dict(reward_kwargs or {})
        if inspect.iscoroutinefunction(raw):
            async def call_async(*args, **kwargs):
                return await raw(*args, **{**kwargs, **merged})

            return call_async

        def call(*args, **kwargs):
            return raw(*args, **{**kwargs, **merged})

        return call
    config = types.SimpleNamespace(reward={"custom_reward_function": {"path": path, "name": name,
                                                                      "reward_kwargs": reward_kwargs or {}}})
    import_utils = types.ModuleType("verl.utils.import_utils")
    import_utils.load_extern_object = loader["load_extern_object"]
    with stub_modules(verl=package("verl"), **{"verl.utils": package("verl.utils"),
                                               "verl.utils.import_utils": import_utils}):
        return reward["get_custom_reward_fn"](config)


async def verl_run_single(compute_score, ground_truth, solution_str, extra_info=None):
    """What verl/experimental/reward_loop/reward_manager/naive.py::NaiveRewardManager.run_single
    (0.9.1, L34-99) does around the call: the extra_info it builds, async or executor by
    inspect.iscoroutinefunction, and its reading of the result."""
    extra_info = dict(extra_info or {})
    extra_info["num_turns"] = None
    extra_info["rollout_reward_scores"] = {}
    kwargs = {"data_source": "dicebench/kernel", "solution_str": solution_str, "ground_truth": ground_truth,
              "extra_info": extra_info}
    if inspect.iscoroutinefunction(compute_score):
        result = await compute_score(**kwargs)
    else:
        result = await asyncio.get_running_loop().run_in_executor(None, lambda: compute_score(**kwargs))
    if isinstance(result, dict):
        return {"reward_score": result["score"], "reward_extra_info": dict(result)}
    return {"reward_score": result, "reward_extra_info": {"acc": result}}


def verl_compute_rm_score(outputs):
    """verl's RewardLoopManager.compute_rm_score (reward_loop.py L366-369): the first sample's keys."""
    keys = outputs[0]["reward_extra_info"].keys()
    return {key: [o["reward_extra_info"][key] for o in outputs] for key in keys}


class Verl(Adapter):
    @classmethod
    def setUpClass(cls):  # a suite's extraction for raw completions, and its review
        cls.evaluator = dicebench.Evaluator("cpu", workers=2, suite="kernelbench-l1", timing_budget=BUDGET,
                                            timeout=TIMEOUT, config={"kernelbench.root": KERNELBENCH})

    @classmethod
    def tearDownClass(cls):
        cls.evaluator.close()

    def samples(self):
        relu_square = read(os.path.join(KERNELBENCH, "level1", "2_ReluSquare.py"))
        square = with_cuda_path("x", "torch.relu(x) ** 2")
        return [  # (ground_truth, extra_info, response, score)
            (ADD, None, completion(CUDA_ADD), 1.0),
            (ADD, None, completion(CORRECT), 0.0),  # correct, but no CUDA where CUDA was asked for: zeroed
            (ADD, None, completion(WRONG), 0.0),
            (ADD, None, "I cannot write this one.", 0.0),
            (ADD_SOURCE, None, completion(CUDA_ADD), 1.0),
            ("", {"pytorch_code": relu_square}, completion(square), 1.0),  # DICE-style data: the problem in extra_info
            ("kernelbench/level1/99", None, completion(CUDA_ADD), -1.0),  # not the suite's: not judged
        ]

    def check(self, compute_score, judge_calls_before):
        samples = self.samples()

        async def rollout():
            return await asyncio.gather(*(verl_run_single(compute_score, truth, response, extra)
                                          for truth, extra, response, _ in samples))

        outputs = asyncio.run(rollout())
        self.assertEqual([o["reward_score"] for o in outputs], [s[-1] for s in samples])
        columns = verl_compute_rm_score(outputs)  # a key missing from a later sample would be a KeyError here
        self.assertEqual(list(columns), ["score", *verl_adapter.EXTRA_KEYS])
        self.assertEqual(columns["verdict"], ["correct", "correct", "output_mismatch", "extraction_failed", "correct",
                                              "correct", ""])
        self.assertEqual(columns["status"][-1], "problem_failed")
        self.assertEqual(columns["acc"], [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0])  # acc is correctness; score the reward
        self.assertTrue(all(isinstance(v, (float, str)) for values in columns.values() for v in values))
        # The seven concurrent one-sample calls went to the Evaluator as one judge() call.
        batcher = _common.shared_batcher(_common.current_settings().for_completions())
        self.assertEqual(batcher.batches - judge_calls_before, 1)

    def test_loaded_by_verl_and_awaited_as_its_reward_loop_does(self):
        configure(judge=self.evaluator, unjudged_reward=-1.0, batch_window=0.5)
        compute_score = verl_get_custom_reward_fn("pkg://dicebench.trainers.verl", "compute_score_async")
        self.assertTrue(inspect.iscoroutinefunction(compute_score))  # naive.py L30: awaited, not run in a thread
        self.check(compute_score, 0)

    def test_verls_own_loader(self):
        configure(judge=StandInJudge())
        for name, is_async in (("compute_score_async", True), ("compute_score", False)):
            fn = verl_get_custom_reward_fn("pkg://dicebench.trainers.verl", name, real=True)
            self.assertIsInstance(fn, functools.partial)  # verl's own wrapping, not the written-out one
            self.assertEqual(inspect.iscoroutinefunction(fn), is_async)
            self.assertEqual(asyncio.run(verl_run_single(fn, "P", "CORRECT"))["reward_score"], 1.0)

    def test_the_example_file_loaded_by_path(self):
        configure(judge=StandInJudge())
        compute_score = verl_get_custom_reward_fn(str(EXAMPLES / "verl_reward.py"), "compute_score")
        self.assertTrue(inspect.iscoroutinefunction(compute_score))
        sync = verl_get_custom_reward_fn(str(EXAMPLES / "verl_reward.py"), "compute_score_sync")
        self.assertFalse(inspect.iscoroutinefunction(sync))
        out = asyncio.run(verl_run_single(sync, "P", "CORRECT"))
        self.assertEqual(out["reward_score"], 1.0)
        # reward_kwargs of verl's config reach the function (their shape for every call).
        shaped = verl_get_custom_reward_fn(str(EXAMPLES / "verl_reward.py"), "compute_score", {"reward": "speedup"})
        self.assertEqual(asyncio.run(verl_run_single(shaped, "P", "CORRECT"))["reward_score"], 7.0)

    def test_sync_calls_from_threads_are_judged_together(self):
        judge = StandInJudge()
        configure(judge=judge, batch_window=0.5)
        texts = ["CORRECT", "WRONG", "SYNTAX", "CORRECT"]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:  # as run_in_executor's default pool runs them
            futures = [pool.submit(verl_adapter.compute_score, data_source="d", solution_str=t,
                                   ground_truth="P" if i < 3 else "BROKEN", extra_info={}) for i, t in enumerate(texts)]
            results = [f.result() for f in futures]
        self.assertEqual([r["score"] for r in results], [1.0, 0.0, 0.0, 0.0])
        columns = verl_compute_rm_score([{"reward_extra_info": r} for r in results])  # the same keys for all
        self.assertEqual(columns["status"], ["judged", "judged", "judged", "problem_failed"])
        self.assertEqual(len(judge.calls), 1)
        self.assertEqual(sorted(judge.calls[0]["responses"]), sorted(texts))
        self.assertEqual((judge.calls[0]["completions"], judge.calls[0]["reward"]), (True, "correctness"))

    def test_batch_and_positional_forms(self):
        judge = StandInJudge()
        configure(judge=judge, reward="correctness", reward_params={"zscore": 1})
        # verl <= 0.7 verl/workers/reward_manager/batch.py::BatchRewardManager.verify L70-76: one call.
        scores = verl_adapter.compute_score_batch(data_sources=["d", "d"], solution_strs=["CORRECT", "WRONG"],
                                                  ground_truths=["P", None], extra_infos=[{}, {"problem": "Q"}])
        self.assertEqual([s["score"] for s in scores], [1.0, 0.0])
        self.assertEqual(judge.calls[0]["problems"], ["P", "Q"])
        self.assertEqual(judge.calls[0]["params"], {"zscore": 1.0})  # normalised within this batch's groups
        # One-sample calls would make the groups arbitrary: refused.
        with self.assertRaises(ValueError):
            verl_adapter.compute_score("d", "CORRECT", "P")
        configure(judge=judge)
        # verl/trainer/main_eval.py::process_item: reward_fn(data_source, r, ground_truth), averaged.
        self.assertEqual(verl_adapter.compute_score_value("d", "CORRECT", "P"), 1.0)
        with self.assertRaises(TypeError):  # no problem anywhere: the data's mistake, said at once
            verl_adapter.compute_score("d", "CORRECT", None, {})


# ---------------------------------------------------------------------------------------------------

def trl_helpers(*, real: bool = False):
    """trl 1.16.0's trl/trainer/utils.py::get_callable_name and is_async_callable (functools and
    inspect only), which GRPOTrainer.__init__ (L548-564) and _calculate_rewards (L1622) use. Without
    the wheel (real=False), what they do, written out: partials unwrapped, then __name__ (else the
    class's name), and async where the function or its __call__ is a coroutine function."""
    try:
        return functions_from("trl", "trl/trainer/utils.py", {"get_callable_name", "is_async_callable"},
                              {"functools": functools, "inspect": inspect, "Callable": typing.Callable})
    except unittest.SkipTest:
        if real:
            raise

    def unwrapped(func):
        while isinstance(func, functools.partial):
            func = func.func
        return func

    return {"get_callable_name": lambda f: getattr(unwrapped(f), "__name__", type(unwrapped(f)).__name__),
            "is_async_callable": lambda f: (inspect.iscoroutinefunction(unwrapped(f))
                                            or inspect.iscoroutinefunction(unwrapped(f).__call__))}


def trl_calculate_rewards(reward_funcs, inputs, prompts, completions, completion_ids):
    """GRPOTrainer._calculate_rewards (trl 1.16.0 grpo_trainer.py L1579-1660) without torch: the
    keyword arguments it builds, sync functions called in turn, async ones gathered on an event loop
    of their own thread, None as NaN, the length check."""
    keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
    reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
    logged = {"extra": {}, "metrics": {}}
    reward_kwargs["trainer_state"] = types.SimpleNamespace(global_step=3)
    reward_kwargs["log_extra"] = lambda column, values: logged["extra"].setdefault(column, []).extend(values)
    reward_kwargs["log_metric"] = lambda name, value: logged["metrics"].setdefault(name, []).append(value)
    is_async = trl_helpers()["is_async_callable"]
    columns, async_funcs = {}, []
    for i, func in enumerate(reward_funcs):
        if is_async(func):
            async_funcs.append((i, func))
        else:
            columns[i] = func(prompts=prompts, completions=completions, completion_ids=completion_ids, **reward_kwargs)

    async def run_async():
        return await asyncio.gather(*(func(prompts=prompts, completions=completions, completion_ids=completion_ids,
                                           **reward_kwargs) for _, func in async_funcs))

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)  # the trainer's "GRPOTrainer-AsyncLoop"
    thread.start()
    try:
        for (i, _), out in zip(async_funcs, asyncio.run_coroutine_threadsafe(run_async(), loop).result()):
            columns[i] = out
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
    for i, out in columns.items():
        if len(out) != len(prompts):
            raise ValueError(f"reward function {i} returned {len(out)} rewards for {len(prompts)} prompts")
        columns[i] = [float("nan") if r is None else r for r in out]
    return [columns[i] for i in range(len(reward_funcs))], logged


class Trl(Adapter):
    def batch(self, conversational: bool):
        texts = ["CORRECT", "WRONG", "no code at all", "CORRECT"]
        problems = ["P", "P", "Q", "BROKEN"]  # B = 2 prompts x G = 2 generations
        prompt = [{"role": "user", "content": "write a kernel"}] if conversational else "write a kernel"
        completions = ([[{"role": "assistant", "content": [{"type": "text", "text": t}]}] for t in texts]
                       if conversational else texts)
        inputs = [{"prompt": prompt, "problem": p, "level": 1} for p in problems]
        return inputs, [prompt] * 4, completions, [[1, 2, 3]] * 4, texts

    def test_named_and_classed_as_trl_does(self):
        helpers = trl_helpers()
        sync, asynchronous = trl_adapter.KernelReward("problem"), trl_adapter.AsyncKernelReward("problem", name="kb")
        self.assertEqual(helpers["get_callable_name"](sync), "dicebench_kernel")
        self.assertEqual(sync.__name__, "dicebench_kernel")  # TRL <= 1.8 reads reward_funcs[i].__name__
        self.assertEqual(helpers["get_callable_name"](asynchronous), "kb")
        self.assertFalse(helpers["is_async_callable"](sync))
        self.assertTrue(helpers["is_async_callable"](asynchronous))
        # TRL 0.27 - 1.13 checked inspect.iscoroutinefunction on the function itself.
        function = asynchronous.function()
        self.assertTrue(inspect.iscoroutinefunction(function))
        self.assertEqual(function.__name__, "kb")
        restored = pickle.loads(pickle.dumps(asynchronous))  # TRL may pickle reward functions to its workers
        self.assertEqual((restored.__name__, restored.problem_column), ("kb", "problem"))

    def test_trls_own_helpers(self):
        helpers = trl_helpers(real=True)
        self.assertEqual(helpers["get_callable_name"](trl_adapter.KernelReward()), "dicebench_kernel")
        self.assertEqual(helpers["get_callable_name"](functools.partial(trl_adapter.KernelReward(name="kb"))), "kb")
        self.assertFalse(helpers["is_async_callable"](trl_adapter.KernelReward()))
        self.assertTrue(helpers["is_async_callable"](trl_adapter.AsyncKernelReward()))
        self.assertTrue(helpers["is_async_callable"](trl_adapter.AsyncKernelReward().function()))

    def test_called_as_grpo_trainer_calls(self):
        judge = StandInJudge()
        configure(judge=judge)
        for conversational in (False, True):
            judge.calls.clear()
            inputs, prompts, completions, ids, texts = self.batch(conversational)
            funcs = [trl_adapter.KernelReward("problem"), trl_adapter.AsyncKernelReward("problem", name="async_kb"),
                     trl_adapter.AsyncKernelReward("problem", name="old").function()]
            (sync, asynchronous, function), logged = trl_calculate_rewards(funcs, inputs, prompts, completions, ids)
            self.assertEqual(sync[:3], [1.0, 0.0, 0.0])
            self.assertNotEqual(sync[3], sync[3])  # None (not judged: its problem failed) became NaN
            self.assertEqual(str(asynchronous), str(sync))
            self.assertEqual(str(function), str(sync))
            self.assertEqual(len(judge.calls), 3)  # one judge() call per function for the whole batch
            self.assertEqual(judge.calls[0]["responses"], texts)  # the assistant's text of each completion
            self.assertEqual(judge.calls[0]["problems"], ["P", "P", "Q", "BROKEN"])
            self.assertEqual(logged["extra"]["dicebench_kernel_verdict"],
                             ["correct", "output_mismatch", "extraction_failed", "problem_failed"])
            self.assertEqual(logged["metrics"]["dicebench_kernel/correct"], [0.25])
            self.assertEqual(logged["metrics"]["dicebench_kernel/judged"], [0.75])

    def test_the_shape_and_a_missing_column(self):
        judge = StandInJudge()
        inputs, prompts, completions, ids, _ = self.batch(False)
        reward = trl_adapter.KernelReward("problem", reward="speedup", judge=judge, log=False)
        [out], logged = trl_calculate_rewards([reward], inputs, prompts, completions, ids)
        self.assertEqual(out[0], 7.0)
        self.assertEqual(judge.calls[0]["reward"], "speedup")
        self.assertEqual(logged, {"extra": {}, "metrics": {}})
        with self.assertRaises(KeyError) as raised:
            trl_calculate_rewards([trl_adapter.KernelReward("pytorch_code", judge=judge)], inputs, prompts,
                                  completions, ids)
        self.assertIn("no dataset column 'pytorch_code'", str(raised.exception))
        with self.assertRaises(ValueError):
            trl_adapter.KernelReward(reward="speedup", correct_weight=1.0)


# ---------------------------------------------------------------------------------------------------

CHAT_PROMPT = ("<|im_start|>user\nMake this faster:\n```python\nclass Model: ...\n```<|im_end|>\n"
               "<|im_start|>assistant\n")


class CharTokenizer:
    """A tokenizer of characters, with <|im_end|> as one special token (the end of the turn)."""

    END = 0x110000

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        return {"input_ids": [types.SimpleNamespace(tolist=lambda: [ord(c) for c in text])]}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(("" if skip_special_tokens else "<|im_end|>") if i == self.END else chr(i) for i in ids)


class ScriptedEngine:
    """vLLM's engine as OpenRLHF's executor uses it: generate() gives a scripted response."""

    def __init__(self, responses):
        self.responses = dict(responses)

    async def generate(self, prompt_ids, sampling_params, multi_modal_data=None):
        prompt = "".join(chr(i) for i in prompt_ids)
        text = next(r for key, r in self.responses.items() if key in prompt)
        output = types.SimpleNamespace(token_ids=[ord(c) for c in text] + [CharTokenizer.END], finish_reason="stop",
                                       logprobs=None)
        return types.SimpleNamespace(outputs=[output])


class OpenRLHF(Adapter):
    def test_the_response_is_the_query_after_its_prompt(self):
        response_of = openrlhf_adapter.response_of
        self.assertEqual(response_of(CHAT_PROMPT + "```python\nx\n```<|im_end|>", CHAT_PROMPT), "```python\nx\n```")
        self.assertEqual(response_of(CHAT_PROMPT + "done </s>\n", CHAT_PROMPT), "done")
        self.assertEqual(response_of(CHAT_PROMPT + "a<|eot_id|><|endoftext|>", CHAT_PROMPT), "a")
        # A prompt cut at its start (OpenRLHF truncates long prompts from the left): found by its end.
        self.assertEqual(response_of(CHAT_PROMPT[40:] + "answer", CHAT_PROMPT), "answer")
        self.assertEqual(response_of(" " + CHAT_PROMPT + "answer", CHAT_PROMPT), "answer")  # decoding added a space
        two_turns = CHAT_PROMPT + "earlier answer<|im_end|>\n" + CHAT_PROMPT
        self.assertEqual(response_of(two_turns[30:] + "answer", two_turns), "answer")  # the last turn's header
        openrlhf_adapter._warned = False
        with self.assertLogs("dicebench.trainers", "WARNING"):  # said once: the whole query is judged
            self.assertEqual(response_of("no prompt here", CHAT_PROMPT), "no prompt here")

    def test_run_by_openrlhfs_executor(self):
        agent = openrlhf_agent()
        judge = StandInJudge()
        configure(judge=judge, batch_window=0.5)
        # The file --reward.remote_url names: this module's own source, loaded as OpenRLHF loads it.
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=[openrlhf_adapter.__file__])
        self.assertIsNotNone(executor.reward_func)
        prompts = {"P1": CHAT_PROMPT.replace("Model", "Model1"), "P2": CHAT_PROMPT.replace("Model", "Model2"),
                   "P3": CHAT_PROMPT.replace("Model", "Model3")}
        engine = ScriptedEngine({"Model1": "```python\nCORRECT\n```", "Model2": "```python\nWRONG\n```",
                                 "Model3": "```python\nCORRECT\n```"})
        params = types.SimpleNamespace(max_tokens=64, logprobs=None)

        async def rollouts():  # samples_generator.py runs execute() per prompt, concurrently
            return await asyncio.gather(*(executor.execute(prompt, label if label != "P3" else "BROKEN", params, 4096,
                                                           CharTokenizer(), engine) for label, prompt in prompts.items()))

        outputs = asyncio.run(rollouts())
        self.assertEqual([o["reward"] for o in outputs], [[1.0], [0.0], [0.0]])
        self.assertEqual([o["scores"] for o in outputs], [[1.0], [0.0], [0.0]])
        self.assertEqual(outputs[0]["extra_logs"], {"dicebench_compiled": [1.0], "dicebench_correct": [1.0],
                                                    "dicebench_speedup": [1.5], "dicebench_judged": [1.0]})
        self.assertEqual(outputs[2]["extra_logs"]["dicebench_judged"], [0.0])
        self.assertEqual(len(judge.calls), 1)  # three rollouts' one-sample calls, judged together
        self.assertEqual(sorted(judge.calls[0]["responses"]), ["```python\nCORRECT\n```", "```python\nCORRECT\n```",
                                                               "```python\nWRONG\n```"])

    def test_called_as_the_executor_calls_it(self):
        # openrlhf/utils/agent.py::SingleTurnAgentExecutor._fetch_rewards_via_func (0.11.2 L308-325):
        # asyncio.to_thread(reward_func, [query], [prompt], [label]), positional, one sample each.
        judge = StandInJudge()
        configure(judge=judge, reward="speedup", unjudged_reward=-1.0)
        queries = [CHAT_PROMPT + "```python\nCORRECT\n```<|im_end|>", CHAT_PROMPT + "```python\nCORRECT\n```"]

        async def calls():
            return await asyncio.gather(asyncio.to_thread(openrlhf_adapter.reward_func, [queries[0]], [CHAT_PROMPT], ["P"]),
                                        asyncio.to_thread(openrlhf_adapter.reward_func, [queries[1]], [CHAT_PROMPT],
                                                          ["BROKEN"]))

        first, second = asyncio.run(calls())
        self.assertEqual((first["rewards"], second["rewards"]), ([7.0], [-1.0]))
        self.assertEqual(judge.calls[0]["reward"], "speedup")
        with self.assertRaises(ValueError):
            openrlhf_adapter.reward_func(queries, [CHAT_PROMPT], ["P"])


class RealService(Adapter):
    """RemoteJudge, an adapter set to DICEBENCH_URL, and OpenRLHF's HTTP call, against a real
    `dicebench serve`."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.serve = Serve(os.path.join(cls.folder.name, "serve.db"))

    @classmethod
    def tearDownClass(cls):
        code = cls.serve.stop()
        cls.folder.cleanup()
        assert code == 0, f"dicebench serve ended with {code}"

    def test_judged_by_the_service_and_through_an_adapter(self):
        client = RemoteJudge(self.serve.url)
        problems = [ADD, ADD, "kernelbench/level1/99"]
        texts = [completion(CUDA_ADD), completion(CORRECT), completion(CUDA_ADD)]
        got = client.judge(problems, texts, reward="correctness")
        self.assertEqual([j.status for j in got], ["judged", "judged", "problem_failed"])
        self.assertEqual([j.reward for j in got], [1.0, 0.0, None])  # plain PyTorch where CUDA was asked: zeroed
        self.assertEqual(got[1].evaluation.flags.keys(), {"backend_unused"})
        # TRL's reward function, its settings naming the service (DICEBENCH_URL, DICEBENCH_TOKEN).
        configure(url=self.serve.url)
        inputs = [{"prompt": "p", "problem": p} for p in problems]
        [rewards], _ = trl_calculate_rewards([trl_adapter.KernelReward("problem")], inputs, ["p"] * 3, texts, [[1]] * 3)
        self.assertEqual(rewards[:2], [1.0, 0.0])
        self.assertNotEqual(rewards[2], rewards[2])  # None: not judged

    def test_a_call_outlasting_the_servers_wait_asks_again(self):
        # timeout_s 0: the server answers 202 (a job still judging) and the same request again waits on it.
        client = RemoteJudge(self.serve.url, wait=0)
        got = client.judge(ADD, [completion(WRONG), "no code here"], reward="correctness")
        self.assertEqual([j.evaluation.verdict for j in got], ["output_mismatch", "extraction_failed"])
        self.assertEqual([j.reward for j in got], [0.0, 0.0])
        # The server's log: the first request of the two items answered with a job id (202), a later one done.
        self.assertRegex(self.serve.text(), r"/v1/evaluate/batch 2 item\(s\) -> job-\d+ in ")
        self.assertRegex(self.serve.text(), r"/v1/evaluate/batch 2 item\(s\) -> done in ")

    def test_openrlhfs_http_call_to_the_service(self):
        # openrlhf/utils/agent.py::SingleTurnAgentExecutor._fetch_rewards_via_http: OpenRLHF's own
        # aiohttp POST of {"query", "prompts", "labels"} (no token: the server listens on loopback).
        agent = openrlhf_agent()
        executor = agent.SingleTurnAgentExecutor(remote_rm_url=[self.serve.url + "/v1/openrlhf"])
        queries = [CHAT_PROMPT + completion(CUDA_ADD) + "<|im_end|>", CHAT_PROMPT + completion(WRONG)]
        infos = asyncio.run(executor._fetch_rewards_via_http(queries, [CHAT_PROMPT] * 2, [ADD, ADD]))
        self.assertEqual([info["rewards"] for info in infos], [[1.0, 0.0]])


class Examples(unittest.TestCase):
    def test_each_example_starts(self):
        # Their --dry-run judges built-in items on a real Evaluator (15 s each here): run by hand.
        for name in ("dice_reward.py", "verl_reward.py", "trl_grpo.py", "openrlhf_reward.py"):
            done = subprocess.run([sys.executable, str(EXAMPLES / name), "--help"], capture_output=True, text=True,
                                  timeout=120, check=False)
            self.assertEqual(done.returncode, 0, f"{name}: {done.stderr}")
            self.assertIn("--dry-run", done.stdout)


if __name__ == "__main__":
    unittest.main()
