#!/usr/bin/env python3
"""The NVRTC fast path's coverage of a set of candidates, measured without a GPU.

For each candidate source (DICE's kernel-infilling items, --dice, and/or a folder of .py candidates,
--sources), finds its torch.utils.cpp_extension.load_inline calls and their arguments, builds the
compile request exactly as the candidate's dicebench_fastpath does (_load_inline._request: the same
fields and the same Python-side declines, arch sm_90 as detect_arch() gives on an H100), runs the
fast path's trusted compile step (build/bin/dicebench-compile, the program the host runs for each
candidate.compile request) on each with a fresh cache folder, and records ok or declined, the reason
and the seconds. Prints counts by outcome and by decline class and a per-item table; --json writes
everything. An item is covered when the fast path takes every one of its load_inline calls.

Arguments come from the source's AST where they can be (string constants, names bound to them at
module level or earlier in the same function, +, %, f-strings, str methods such as join, format,
strip and textwrap.dedent, lists, tuples and dicts of those); a source with any call the AST cannot
resolve is executed once, in dicebench-sandbox --mode best (or, with --no-sandbox or without the
sandbox binary, a plain subprocess), with load_inline replaced by a recorder that binds and stores
the arguments and returns a placeholder module whose functions raise (a source that does not parse,
or never names load_inline, is not run). Each call says which way ("ast" or "stub") its arguments
were obtained. The compile step needs no GPU: what it cannot see
are the decisions made when the entry is loaded on the GPU (cudaLibraryLoadData, the kernel
handles) and the compile deadline the host puts on it.

  tools/perf/fastpath_coverage.py --dice /work/shared/dice/kernel_infilling_evaluation.json \\
      --sources tools/perf/candidates --json /tmp/fastpath_coverage.json
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import functools
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import types
from typing import Any, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

REQUIRED = object()  # a parameter without a default
# torch.utils.cpp_extension.load_inline's parameters in torch 2.11 (the signature _load_inline binds
# a call to), with their defaults.
LOAD_INLINE_PARAMETERS: list[tuple[str, Any]] = [
    ("name", REQUIRED),
    ("cpp_sources", REQUIRED),
    ("cuda_sources", None),
    ("sycl_sources", None),
    ("functions", None),
    ("extra_cflags", None),
    ("extra_cuda_cflags", None),
    ("extra_sycl_cflags", None),
    ("extra_ldflags", None),
    ("extra_include_paths", None),
    ("build_directory", None),
    ("verbose", False),
    ("with_cuda", None),
    ("with_sycl", None),
    ("is_python_module", True),
    ("with_pytorch_error_handling", True),
    ("keep_intermediates", True),
    ("use_pch", False),
    ("no_implicit_headers", False),
]
# The arguments _load_inline._request reads: only these must be known to build the request.
REQUEST_ARGUMENTS = {"name", "cpp_sources", "cuda_sources", "sycl_sources", "functions", "extra_cflags",
                     "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "with_cuda", "is_python_module",
                     "no_implicit_headers"}


# ------------------------------------------------------------------------------------------------
# Arguments from the AST


class Unresolved(Exception):
    """An expression the AST resolver cannot evaluate; the message says what it was."""


class _Opaque:
    """A name whose value the resolver does not know (a parameter, a call result, a conditional)."""

    def __init__(self, why: str):
        self.why = why


def _describe(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


class Resolver:
    """Evaluates the pure, constant part of Python expressions against an environment of names."""

    STR_METHODS = frozenset({"strip", "lstrip", "rstrip", "replace", "format", "join", "upper", "lower", "splitlines", "split"})

    def __init__(self, env: dict[str, Any]):
        self.env = env

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise Unresolved(f"name {node.id} is not bound to a constant")
            v = self.env[node.id]
            if isinstance(v, _Opaque):
                raise Unresolved(f"name {node.id}: {v.why}")
            return v
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    parts.append(str(part.value))
                elif isinstance(part, ast.FormattedValue):
                    v = self.value(part.value)
                    if part.conversion == ord("r"):
                        v = repr(v)
                    elif part.conversion == ord("s"):
                        v = str(v)
                    elif part.conversion == ord("a"):
                        v = ascii(v)
                    spec = self.value(part.format_spec) if part.format_spec is not None else ""
                    parts.append(format(v, spec))
                else:
                    raise Unresolved(f"f-string part {_describe(part)}")
            return "".join(parts)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    items.extend(self.value(element.value))
                else:
                    items.append(self.value(element))
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise Unresolved("dict with ** unpacking")
            return {self.value(k): self.value(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(node.op, ast.Add) and type(left) is type(right) and isinstance(left, (str, list, tuple, int)):
                return left + right
            if isinstance(node.op, ast.Mult) and isinstance(left, (str, list)) and isinstance(right, int):
                return left * right
            if isinstance(node.op, ast.Mod) and isinstance(left, str):
                return left % right
            if isinstance(node.op, (ast.Sub, ast.Mult, ast.FloorDiv)) and type(left) is int and type(right) is int:
                return {ast.Sub: left - right, ast.Mult: left * right,
                        ast.FloorDiv: left // right if right else 0}[type(node.op)]
            raise Unresolved(f"operation {_describe(node)}")
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unresolved(f"expression {_describe(node)}")

    def call(self, node: ast.Call) -> Any:
        func = node.func
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unresolved(f"call with * or ** arguments: {_describe(node)}")
        args = [self.value(a) for a in node.args]
        kwargs = {k.arg: self.value(k.value) for k in node.keywords}
        if isinstance(func, ast.Attribute) and func.attr == "dedent" and isinstance(func.value, ast.Name) \
                and func.value.id == "textwrap":
            return textwrap.dedent(*args, **kwargs)
        if isinstance(func, ast.Name) and func.id == "dedent" and self.env.get("dedent") is textwrap.dedent:
            return textwrap.dedent(*args, **kwargs)
        if isinstance(func, ast.Name) and func.id in ("str", "list", "tuple") and func.id not in self.env:
            return {"str": str, "list": list, "tuple": tuple}[func.id](*args, **kwargs)
        if isinstance(func, ast.Attribute) and func.attr in self.STR_METHODS:
            target = self.value(func.value)
            if isinstance(target, str):
                return getattr(target, func.attr)(*args, **kwargs)
        raise Unresolved(f"call {_describe(node)}")


def _assigned_names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _is_load_inline(node: ast.AST, aliases: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id in aliases) or (isinstance(f, ast.Attribute) and f.attr == "load_inline")


def _bind(node: ast.Call, resolver: Resolver) -> dict:
    """The call's arguments bound to load_inline's signature, defaults applied; the request's
    arguments resolved (else Unresolved), the others resolved where possible."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise Unresolved("load_inline called with * or ** arguments")
    names = [name for name, _ in LOAD_INLINE_PARAMETERS]
    if len(node.args) > len(names):
        return {"__bind_error__": f"takes from 2 to {len(names)} positional arguments but {len(node.args)} were given"}
    given: dict[str, ast.AST] = dict(zip(names, node.args))
    for k in node.keywords:
        if k.arg in given:
            return {"__bind_error__": f"multiple values for argument '{k.arg}'"}
        if k.arg not in names:
            return {"__bind_error__": f"got an unexpected keyword argument '{k.arg}'"}
        given[k.arg] = k.value  # type: ignore[index]
    bound: dict[str, Any] = {}
    for name, default in LOAD_INLINE_PARAMETERS:
        if name not in given:
            if default is REQUIRED:
                return {"__bind_error__": f"missing a required argument: '{name}'"}
            bound[name] = default
            continue
        try:
            bound[name] = resolver.value(given[name])
        except Unresolved:
            if name in REQUEST_ARGUMENTS:
                raise
            bound[name] = f"<unresolved: {_describe(given[name])}>"
    return bound


class _Walker:
    """Walks statements in order, keeping the names bound to constants, and resolves every
    load_inline call with the environment of its place."""

    def __init__(self, aliases: set[str]):
        self.aliases = aliases
        self.calls: list[dict] = []  # {line, arguments | unresolved}
        self.deferred: list[tuple[ast.AST, dict[str, Any]]] = []

    def calls_in(self, node: ast.AST) -> list[ast.Call]:
        found = [n for n in ast.walk(node) if _is_load_inline(n, self.aliases)]
        return sorted(found, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]

    def resolve_calls(self, node: ast.AST, env: dict[str, Any]) -> None:
        for call in self.calls_in(node):
            record: dict[str, Any] = {"line": call.lineno}
            try:
                record["arguments"] = _bind(call, Resolver(env))
            except Unresolved as error:
                record["unresolved"] = str(error)
            except Exception as error:  # noqa: BLE001 - evaluating a constant expression failed (a bad % format, say)
                record["unresolved"] = f"{type(error).__name__}: {error}"
            self.calls.append(record)

    def block(self, statements: list[ast.stmt], env: dict[str, Any]) -> None:
        for s in statements:
            self.statement(s, env)

    def statement(self, s: ast.stmt, env: dict[str, Any]) -> None:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            env[s.name] = _Opaque(f"{s.name} is a function or class")
            self.deferred.append((s, env))  # resolved later, against the module's final names
            return
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            for alias in s.names:
                bound = alias.asname or alias.name.split(".")[0]
                if isinstance(s, ast.ImportFrom) and alias.name == "load_inline":
                    self.aliases.add(bound)
                if isinstance(s, ast.ImportFrom) and s.module == "textwrap" and alias.name == "dedent":
                    env[bound] = textwrap.dedent
                else:
                    env[bound] = _Opaque(f"{bound} is an imported module or name")
            return
        if isinstance(s, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith)) or \
                type(s).__name__ in ("TryStar", "Match"):
            # Calls inside see the names as they are before the block; names the block binds are
            # unknown afterwards (a with-block runs once, in order: it is walked like the module).
            if isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    self.resolve_calls(item.context_expr, env)
                self.block(s.body, env)
                return
            for field in ("test", "iter", "subject"):
                if getattr(s, field, None) is not None:
                    self.resolve_calls(getattr(s, field), env)
            inner = dict(env)
            for field in ("body", "orelse", "finalbody"):
                self.block(getattr(s, field, []) or [], inner)
            for handler in getattr(s, "handlers", []) or []:
                self.block(handler.body, dict(env))
            for case in getattr(s, "cases", []) or []:
                self.block(case.body, dict(env))
            for name in {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}:
                env[name] = _Opaque(f"{name} is bound inside a conditional or loop block")
            return
        # A simple statement: its calls see the names before it; then its bindings take effect.
        self.resolve_calls(s, env)
        resolver = Resolver(env)
        if isinstance(s, ast.Assign):
            try:
                value: Any = resolver.value(s.value)
            except Exception as error:  # noqa: BLE001 - any failure leaves the name unknown
                value = _Opaque(str(error) if isinstance(error, Unresolved) else f"{type(error).__name__}: {error}")
            for target in s.targets:
                if isinstance(target, ast.Name):
                    env[target.id] = value
                elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (list, tuple)) and \
                        len(value) == len(target.elts) and all(isinstance(t, ast.Name) for t in target.elts):
                    for t, v in zip(target.elts, value):
                        env[t.id] = v  # type: ignore[attr-defined]
                else:
                    for name in _assigned_names(target):
                        env[name] = _Opaque(f"{name} is bound by an unpacking or subscript")
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None:
            try:
                env[s.target.id] = resolver.value(s.value)
            except Exception as error:  # noqa: BLE001 - any failure leaves the name unknown
                env[s.target.id] = _Opaque(str(error))
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            try:
                env[s.target.id] = resolver.value(ast.BinOp(left=ast.Name(id=s.target.id, ctx=ast.Load()), op=s.op,
                                                            right=s.value))
            except Exception as error:  # noqa: BLE001 - any failure leaves the name unknown
                env[s.target.id] = _Opaque(str(error))
        else:
            for node in ast.walk(s):
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    env[node.id] = _Opaque(f"{node.id} is rebound")
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    for name in node.names:
                        env[name] = _Opaque(f"{name} is global or nonlocal")

    def run(self, tree: ast.Module) -> list[dict]:
        module_env: dict[str, Any] = {}
        self.block(tree.body, module_env)
        while self.deferred:
            node, _ = self.deferred.pop(0)
            env = dict(module_env)  # a function runs after the module has bound its names
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    self.resolve_calls(d, env)
                arguments = node.args
                for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs + \
                        [x for x in (arguments.vararg, arguments.kwarg) if x is not None]:
                    env[a.arg] = _Opaque(f"{a.arg} is a parameter of {node.name}")
                self.block(node.body, env)
            else:
                self.block(node.body, env)  # type: ignore[attr-defined]
        self.calls.sort(key=lambda c: c["line"])
        return self.calls


def ast_calls(source: str) -> tuple[list[dict], str]:
    """The load_inline calls of a source, each {line, arguments} or {line, unresolved}; and an
    error when the source does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [], f"SyntaxError: {error}"
    return _Walker({"load_inline"}).run(tree), ""


# ------------------------------------------------------------------------------------------------
# Arguments by running the module with a recording load_inline

STUB_RUNNER = r'''
import inspect, json, sys, types
import torch.utils.cpp_extension as cpp_extension

source_path, out_path = sys.argv[1], sys.argv[2]
signature = inspect.signature(cpp_extension.load_inline)
calls = []


def plain(value):
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return "<unresolved: %s>" % type(value).__name__


def save(error=""):
    with open(out_path, "w") as f:
        json.dump({"calls": calls, "error": error}, f)


class Placeholder(types.ModuleType):
    def __getattr__(self, attribute):
        def call(*args, **kwargs):
            raise RuntimeError("fastpath_coverage: load_inline recorded, not built")
        return call


def load_inline(*args, **kwargs):
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        calls.append({"__bind_error__": str(error)})
    else:
        bound.apply_defaults()
        calls.append({k: plain(v) for k, v in bound.arguments.items()})
    save()
    return Placeholder("recorded_load_inline_module")


cpp_extension.load_inline = load_inline
module = types.ModuleType("candidate")
module.__file__ = source_path
sys.modules["candidate"] = module
error = ""
try:
    with open(source_path) as f:
        exec(compile(f.read(), source_path, "exec"), module.__dict__)
except BaseException as e:
    error = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
save(error)
'''


def stub_calls(source: str, python: str, sandbox: Optional[str], timeout: float) -> tuple[list[dict], str, str]:
    """Runs the source with a recording load_inline; returns (calls, error, how it was run)."""
    job = tempfile.mkdtemp(prefix="fastpath-coverage-stub-")
    try:
        with open(os.path.join(job, "runner.py"), "w", encoding="utf-8") as f:
            f.write(STUB_RUNNER)
        with open(os.path.join(job, "candidate.py"), "w", encoding="utf-8") as f:
            f.write(source)
        out = os.path.join(job, "calls.json")
        command = [os.path.abspath(python), os.path.join(job, "runner.py"), os.path.join(job, "candidate.py"), out]
        how = "subprocess"
        if sandbox:
            command = [os.path.abspath(sandbox), "--mode", "best", "--job-dir", job, "--", *command]
            how = "dicebench-sandbox --mode best"
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, cwd=job)
        except subprocess.TimeoutExpired:
            return [], f"timed out after {timeout:.0f} s", how
        if not os.path.exists(out):
            tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or [f"exit {run.returncode}"]
            return [], f"the stub run wrote nothing: {tail[0]}", how
        with open(out, encoding="utf-8") as f:
            recorded = json.load(f)
        return recorded["calls"], recorded["error"], how
    finally:
        shutil.rmtree(job, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# The request, as _load_inline._request builds it


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "fastpath", "python"))
from dicebench_fastpath import _load_inline  # noqa: E402  (the candidate's own request building)

Declined = _load_inline.FastPathUnavailable


def build_request(arguments: dict, arch: str) -> dict:
    """_load_inline._request on bound arguments (tuples arrive as lists from the stub: the same)."""
    if "__bind_error__" in arguments:
        raise Declined(f"arguments do not fit load_inline: {arguments['__bind_error__']}")
    state = types.SimpleNamespace(arch=arch, torch_include_dirs=_torch_include_dirs())
    return _load_inline._request(state, arguments)  # type: ignore[arg-type]


@functools.cache
def _torch_include_dirs() -> frozenset[str]:
    """torch's own include folders, as the candidate's state holds them (include paths naming them
    stay on the fast path)."""
    return _load_inline._torch_include_dirs()


# ------------------------------------------------------------------------------------------------
# The compile step (framing as harness/client/frame_io: 4-byte little-endian length, then JSON)


def frame(payload: str) -> bytes:
    data = payload.encode("utf-8")
    return struct.pack("<I", len(data)) + data


def unframe(data: bytes) -> Optional[str]:
    if len(data) < 4:
        return None
    (size,) = struct.unpack("<I", data[:4])
    return data[4:4 + size].decode("utf-8", "replace") if len(data) >= 4 + size else None


def run_compile(request: dict, compile_path: str, cache_dir: str, timeout: float) -> dict:
    started = time.perf_counter()
    try:
        run = subprocess.run([compile_path, "--cache-dir", cache_dir], input=frame(json.dumps(request)),
                             capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"ok": False, "reason": f"the compile step ran past {timeout:.0f} s (this tool's limit)",
                "wall_seconds": time.perf_counter() - started}
    payload = unframe(run.stdout)
    wall = time.perf_counter() - started
    if payload is None:
        tail = run.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {run.returncode}"]
        return {"ok": False, "reason": f"the compile step ended without an answer: {tail[0]}", "wall_seconds": wall}
    outcome = json.loads(payload)
    outcome["wall_seconds"] = wall
    return outcome


# ------------------------------------------------------------------------------------------------
# Decline classes: where in the fast path each is decided

CLASSES: list[tuple[str, str, str]] = [
    # (class, pattern on the reason, where it is decided)
    ("arguments", r"^(arguments do not fit|sycl_sources|is_python_module|extra_include_paths|no_implicit_headers|"
                  r"with_cuda=False|name is not|functions is|function name|load_inline without functions|"
                  r"\w+ is (a string|not a string))",
     "harness/fastpath/python/dicebench_fastpath/_load_inline.py: _request / _function_names / _string_list"),
    ("flags", r"^(unsupported (nvcc|host|linker|architecture)|the candidate compiles for|relocatable device code|"
              r"nvcc flag|not a GPU architecture)",
     "harness/fastpath/src/compile_flags.cpp: Mapper::host_flag / cuda_flags / ld_flags (map_compile_flags)"),
    ("splitter", r"\(cuda_sources line \d+\)$|^cuda_sources: ",
     "harness/fastpath/src/source_splitter.cpp: Splitter (match_brackets, parse_entity, collect_kernels, "
     "device_edits, rewrite_launch, find_kernel) / source_scanner.cpp"),
    ("nvrtc", r"^NVRTC|^nvrtc",
     "harness/fastpath/src/nvrtc_compiler.cpp: compile_device_part (nvrtcCompileProgram / nvrtcGetLoweredName)"),
    ("g++ cpp_sources glue", r"^g\+\+ \(cpp_sources glue\)",
     "harness/fastpath/src/glue_compiler.cpp: build_glue (main.cpp: cpp_sources + bindings vs shim/)"),
    ("g++ cuda_sources glue", r"^g\+\+ \(cuda_sources glue\)",
     "harness/fastpath/src/glue_compiler.cpp: build_glue (cuda.cpp: the splitter's host part vs shim/)"),
    ("link", r"^linking the glue",
     "harness/fastpath/src/glue_compiler.cpp: build_glue (g++ -shared -Wl,-z,defs)"),
    ("compile step", r"^(the compile step|malformed compile request|no compile request|cannot )",
     "harness/fastpath/tool/compile_main.cpp / fastpath_compiler.cpp: compile_with_fast_path"),
    ("extraction", r"^extraction: ", "this tool: the arguments could not be obtained"),
]


def classify(reason: str) -> str:
    for name, pattern, _ in CLASSES:
        if re.search(pattern, reason, re.M):
            return name
    return "other"


def detail(reason: str) -> str:
    """A short, source-independent form of the reason: the class's message with names and line
    numbers kept, file paths and column markers dropped."""
    lines = [line for line in reason.splitlines() if line.strip()]
    for line in lines:
        if "error" in line or not line.startswith(" "):
            return re.sub(r"\s+", " ", line).strip()[:200]
    return (lines[0] if lines else reason)[:200]


# ------------------------------------------------------------------------------------------------
# Items


def read_items(args: argparse.Namespace) -> list[dict]:
    items: list[dict] = []
    if args.dice:
        with open(args.dice, encoding="utf-8") as f:
            items.extend({"id": f"dice:{entry['id']}", "set": "dice", "source": entry["cuda_code"]}
                         for entry in json.load(f))
    for folder in args.sources or []:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    items.append({"id": name, "set": os.path.basename(os.path.normpath(folder)), "source": f.read()})
    return items


def extract(item: dict, args: argparse.Namespace) -> None:
    calls, error = ast_calls(item["source"])
    item["parse_error"] = error
    if calls and all("arguments" in c for c in calls):
        item["calls"] = [{"line": c["line"], "method": "ast", "arguments": c["arguments"]} for c in calls]
        return
    if error or (not calls and "load_inline" not in item["source"]):
        item["calls"] = []  # it cannot run, or it never names load_inline: nothing to run
        return
    why = "; ".join(f"line {c['line']}: {c['unresolved']}" for c in calls if "unresolved" in c) or error or \
        "no load_inline call found by the AST"
    recorded, run_error, how = stub_calls(item["source"], args.python, args.sandbox_path, args.stub_timeout)
    item["stub"] = {"why": why, "run": how, "error": run_error, "calls_found_by_ast": len(calls)}
    item["calls"] = [{"line": None, "method": "stub", "arguments": a} for a in recorded]
    if not recorded and calls:
        item["calls"] = [{"line": c["line"], "method": "none", "error": f"extraction: {c.get('unresolved', '')}; "
                                                                          f"stub run: {run_error or 'no call recorded'}"}
                         for c in calls]


def compile_call(call: dict, args: argparse.Namespace) -> None:
    if "error" in call:
        call.update(ok=False, reason=call["error"], stage="extraction")
    else:
        try:
            request = build_request(call["arguments"], args.arch)
        except Declined as declined:
            call.update(ok=False, reason=str(declined), stage="python")
        else:
            outcome = run_compile(request, args.compile, args.cache_dir, args.timeout)
            call.update(ok=bool(outcome.get("ok")), reason=outcome.get("reason", ""), stage="compile",
                        seconds=outcome.get("seconds", 0.0), wall_seconds=outcome.get("wall_seconds", 0.0),
                        split_seconds=outcome.get("split_seconds", 0.0),
                        nvrtc_seconds=outcome.get("nvrtc_seconds", 0.0), gxx_seconds=outcome.get("gxx_seconds", 0.0),
                        cache_hit=outcome.get("cache_hit", False), key=outcome.get("key", ""),
                        kernels=outcome.get("kernels", []),
                        request={k: (v if k in ("name", "functions", "arch") or k.startswith("extra") else
                                     [len(s) for s in v]) for k, v in request.items()})
    call["class"] = "" if call["ok"] else classify(call["reason"])
    call["detail"] = "" if call["ok"] else detail(call["reason"])
    call.pop("arguments", None)  # the sources are the data set's, not ours to copy into the report


def summarize(items: list[dict]) -> dict:
    by_set: dict[str, dict] = {}
    for item in items:
        s = by_set.setdefault(item["set"], {"items": 0, "covered": 0, "no_calls": 0, "calls": 0, "calls_ok": 0,
                                            "declined_items_by_class": {}, "declined_calls_by_class": {},
                                            "methods": {}})
        s["items"] += 1
        if not item["calls"]:
            s["no_calls"] += 1
        s["covered"] += int(item["covered"])
        seen: set[str] = set()
        for c in item["calls"]:
            s["calls"] += 1
            s["calls_ok"] += int(c["ok"])
            s["methods"][c["method"]] = s["methods"].get(c["method"], 0) + 1
            if not c["ok"]:
                s["declined_calls_by_class"][c["class"]] = s["declined_calls_by_class"].get(c["class"], 0) + 1
                seen.add(c["class"])
        for cls in seen:
            s["declined_items_by_class"][cls] = s["declined_items_by_class"].get(cls, 0) + 1
    for s in by_set.values():
        with_calls = s["items"] - s["no_calls"]
        s["coverage"] = s["covered"] / with_calls if with_calls else 0.0
    return by_set


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dice", help="DICE's kernel_infilling_evaluation.json (items with cuda_code)")
    parser.add_argument("--sources", action="append", help="a folder of .py candidates (repeatable)")
    parser.add_argument("--compile", default=os.path.join(ROOT, "build/bin/dicebench-compile"),
                        help="the compile step (default build/bin/dicebench-compile)")
    parser.add_argument("--jobs", type=int, default=1, help="compile steps run at once (default 1)")
    parser.add_argument("--json", help="write every item and call here")
    parser.add_argument("--arch", default="sm_90",
                        help="the request's arch: what detect_arch() gives on the GPU (H100: sm_90, the default)")
    parser.add_argument("--cache-dir", help="the compile cache, kept (a declined call's entry keeps the glue sources g++ "
                                            "compiled, under entries/KEY); default: a fresh temporary folder, removed")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per compile step (default 300)")
    parser.add_argument("--python", default=os.path.join(ROOT, ".venv/bin/python"),
                        help="the Python with torch for stub runs (default .venv/bin/python)")
    parser.add_argument("--sandbox", default=os.path.join(ROOT, "build/bin/dicebench-sandbox"),
                        help="dicebench-sandbox for stub runs (default build/bin/dicebench-sandbox)")
    parser.add_argument("--no-sandbox", action="store_true", help="run stub runs as plain subprocesses")
    parser.add_argument("--stub-timeout", type=float, default=120.0, help="seconds per stub run (default 120)")
    parser.add_argument("--only", action="append", help="only items with this id (repeatable)")
    args = parser.parse_args()
    if not args.dice and not args.sources:
        parser.error("give --dice and/or --sources")
    if not os.access(args.compile, os.X_OK):
        parser.error(f"no compile step at {args.compile} (build dicebench-compile)")
    args.sandbox_path = None if args.no_sandbox or not os.access(args.sandbox, os.X_OK) else args.sandbox
    if not os.path.exists(args.python):
        args.python = sys.executable

    items = read_items(args)
    if args.only:
        items = [i for i in items if i["id"] in args.only or i["id"].split(":")[-1] in args.only]
    temporary = args.cache_dir is None
    args.cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="fastpath-coverage-cache-")
    started = time.perf_counter()
    try:
        for item in items:
            extract(item, args)
        calls = [c for item in items for c in item["calls"]]
        # The first compile builds the precompiled preludes (once per cache folder and -O level).
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(lambda c: compile_call(c, args), calls))
    finally:
        if temporary:
            shutil.rmtree(args.cache_dir, ignore_errors=True)
    for item in items:
        item["covered"] = bool(item["calls"]) and all(c["ok"] for c in item["calls"])
        item.pop("source")
    summary = summarize(items)

    print(f"{'item':<40} {'calls':>5} {'how':<5} {'outcome':<9} {'seconds':>8}  reason")
    for item in items:
        how = ",".join(sorted({c["method"] for c in item["calls"]})) or "-"
        seconds = sum(c.get("wall_seconds", 0.0) for c in item["calls"])
        declined = [c for c in item["calls"] if not c["ok"]]
        outcome = "ok" if item["covered"] else ("no call" if not item["calls"] else "declined")
        reason = f"[{declined[0]['class']}] {declined[0]['detail']}" if declined else item["parse_error"][:100]
        print(f"{item['id']:<40} {len(item['calls']):>5} {how:<5} {outcome:<9} {seconds:>8.2f}  {reason}")
    for name, s in summary.items():
        print(f"\n{name}: {s['covered']}/{s['items'] - s['no_calls']} items covered ({100 * s['coverage']:.1f}%), "
              f"{s['calls_ok']}/{s['calls']} load_inline calls on the fast path; {s['no_calls']} items without a "
              f"call; arguments by {s['methods']}")
        for cls, n in sorted(s["declined_items_by_class"].items(), key=lambda kv: -kv[1]):
            print(f"  declined, {cls}: {n} items ({s['declined_calls_by_class'][cls]} calls)")
    details: dict[str, int] = {}
    for c in (c for item in items for c in item["calls"] if not c["ok"]):
        key = f"[{c['class']}] {re.sub(r'line [0-9]+', 'line N', c['detail'])}"
        details[key] = details.get(key, 0) + 1
    if details:
        print("\ndecline reasons (calls):")
        for key, n in sorted(details.items(), key=lambda kv: -kv[1]):
            print(f"  {n:>3}  {key}")
    print(f"\n{time.perf_counter() - started:.1f} s in all")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"arch": args.arch, "compile": args.compile, "jobs": args.jobs,
                       "classes": {name: where for name, _, where in CLASSES}, "summary": summary,
                       "items": items}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
