"""The load_inline replacement of the fast compile path (see the package docstring).

The replacement binds its arguments to the original's signature, so positional and keyword calls
mean what they mean to torch. It takes the fast path only when every argument is one it can honour;
otherwise, and whenever compiling or loading on the fast path fails, it calls torch's load_inline
with exactly the arguments it was given. Each call appends a record to compile_records().
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import sys
import threading
import time
import types
from typing import Any, Callable, Optional

_lock = threading.Lock()
_state: Optional["_State"] = None
_records: list[dict] = []

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")


class FastPathUnavailable(Exception):
    """The fast path declined a call; the message is the reason recorded for it."""


class _State:
    def __init__(self, arch: str, cache_dir: str, log: Callable[[str], None], compile_only: bool,
                 toolchain: Optional[dict], original: Callable[..., Any],
                 compiler: Optional[Callable[[dict], dict]] = None,
                 builder: Optional[Callable[[dict, str], Any]] = None, fast: bool = True):
        self.arch = arch
        self.cache_dir = os.path.abspath(cache_dir)
        self.log = log
        self.compile_only = compile_only
        self.toolchain_overrides = dict(toolchain or {})
        self.original = original
        self.signature = inspect.signature(original)
        self.native: Any = None
        self.native_error: Optional[str] = None
        self.compiler = compiler  # compiles elsewhere (the host's trusted step); None: in this process
        # Builds a call that takes torch's toolchain elsewhere (the host's toolchain service):
        # called with the bound arguments, returns the module, raises the build's error, or
        # returns NotImplemented for a call it cannot take (torch's load_inline runs here then).
        self.builder = builder
        self.fast = fast  # False: every call takes torch's toolchain (a re-judge, eval.fastpath=off)
        # torch's own include folders, read before any candidate code runs (it could patch the function).
        self.torch_include_dirs = _torch_include_dirs()


def _torch_include_dirs() -> frozenset[str]:
    """The folders torch's load_inline puts on every build's include path (with -isystem): the ones
    the shim headers stand in for on the fast path."""
    try:
        import torch.utils.cpp_extension as cpp_extension

        return frozenset(os.path.realpath(path) for path in cpp_extension.include_paths(device_type="cuda"))
    except Exception:  # noqa: BLE001 - without torch, no folder is torch's: every one declines
        return frozenset()


def _foreign_include_paths(state: _State, arguments: dict) -> list[str]:
    """extra_include_paths other than torch's own folders. Those torch's build adds anyway, so naming
    them again changes no header it finds (they are searched first, with -I, but hold the same
    headers); -Werror aside, where torch's own headers' warnings would count against the build."""
    paths = _string_list(arguments.get("extra_include_paths"), "extra_include_paths")
    foreign = [path for path in paths if os.path.realpath(path) not in state.torch_include_dirs]
    if paths and not foreign:
        flags = _string_list(arguments.get("extra_cflags"), "extra_cflags") + _string_list(
            arguments.get("extra_cuda_cflags"), "extra_cuda_cflags")
        if any(flag.startswith("-Werror") or "-Werror" in flag for flag in flags):
            return paths
    return foreign


def normalize_arch(arch: Any) -> str:
    """"sm_90" from "sm_90", "90", "9.0", (9, 0); "sm_90a" stays."""
    if isinstance(arch, (tuple, list)) and len(arch) == 2:
        return f"sm_{int(arch[0])}{int(arch[1])}"
    text = str(arch).strip()
    if text.startswith("sm_"):
        return text
    if re.fullmatch(r"\d+\.\d+", text):
        major, minor = text.split(".")
        return f"sm_{major}{minor}"
    if re.fullmatch(r"\d+[a-z]?", text):
        return f"sm_{text}"
    raise ValueError(f"not a GPU architecture: {arch!r}")


def detect_arch() -> str:
    """The architecture of the current CUDA device, as "sm_XY"."""
    import torch

    return normalize_arch(torch.cuda.get_device_capability())


def _import_native() -> Any:
    extra = os.environ.get("DICEBENCH_FASTPATH_NATIVE_DIR")
    if extra and extra not in sys.path:
        sys.path.insert(0, extra)
    import torch  # noqa: F401 - torch's libraries must be loaded before the module

    return importlib.import_module("dicebench_fastpath_native")


def install(arch: str, cache_dir: str, log: Optional[Callable[[str], None]] = None, *,
            compile_only: bool = False, toolchain: Optional[dict] = None,
            compiler: Optional[Callable[[dict], dict]] = None,
            builder: Optional[Callable[[dict, str], Any]] = None, fast: bool = True) -> None:
    """Replaces torch.utils.cpp_extension.load_inline with the fast path in this process.

    arch: the GPU's architecture ("sm_90"; "90", "9.0" and (9, 0) are accepted).
    cache_dir: the compile cache shared by workers (created if missing).
    log: called with one line per load_inline call (path, time, reason).
    compile_only: compile to the cache but do not load (for a CPU-side precompile stage): the
        returned module's functions raise RuntimeError when called.
    toolchain: overrides of the module's built-in folders (shim_dir, device_shim_dir,
        cuda_include_dir, cuda_library_dir, cxx, timeout_seconds).
    compiler: where set, compiles each request instead of this process (called with the request
        dict, returns the outcome dict dicebench_fastpath_native.compile returns); a sandboxed
        candidate sends its requests to the host this way and only reads the cache, which then
        need not be writable (and is not created) here.
    builder: where set, builds the calls that take torch's toolchain instead of this process
        (called with the call's arguments bound to load_inline's signature and failed_sources()
        of the fast path's reason; returns the module, raises the build's error, or returns
        NotImplemented to leave the call to torch here).
    fast: False declines every call ("fast path not requested"): torch's toolchain only, through
        builder where set; arch and cache_dir are then unused.
    Calling install() again changes the settings; the original load_inline stays the one restored
    by uninstall().
    """
    global _state
    import torch.utils.cpp_extension as cpp_extension

    if compiler is None and fast:
        os.makedirs(cache_dir, exist_ok=True)
    with _lock:
        original = _state.original if _state is not None else cpp_extension.load_inline
        _state = _State(normalize_arch(arch) if fast else str(arch), cache_dir, log or (lambda line: None), compile_only,
                        toolchain, original, compiler, builder, fast)
        if fast:
            try:
                _state.native = _import_native()
            except Exception as error:  # noqa: BLE001 - the fast path is optional; record why it is off
                _state.native_error = f"{type(error).__name__}: {error}"
                _state.log(f"dicebench_fastpath: fast path unavailable ({_state.native_error}); "
                           "every load_inline call takes torch's toolchain")
        cpp_extension.load_inline = _make_replacement(original)


def uninstall() -> None:
    """Puts torch's own load_inline back."""
    global _state
    import torch.utils.cpp_extension as cpp_extension

    with _lock:
        if _state is not None:
            cpp_extension.load_inline = _state.original
            _state = None


def installed() -> bool:
    return _state is not None


def calls() -> int:
    """Calls of functions loaded on the fast path in this process so far that got past the argument
    count (torch's own module refuses a wrong count or keywords alike): until the first, nothing the
    fast path built has run. 0 where its native module was never imported."""
    native = sys.modules.get("dicebench_fastpath_native")
    return int(native.calls()) if native is not None and hasattr(native, "calls") else 0


def compile_records() -> list[dict]:
    """One dict per load_inline call since the process started, in call order:
    name, path ("nvrtc" or "fallback"), reason ("" on the fast path), seconds (the call's wall
    time), kernels (lowered names of the kernels on the fast path), and details: kernel_names (NVRTC
    name expressions), cache_hit, key, split/nvrtc/gxx seconds of the compile, error (the
    exception text when torch's toolchain itself failed), built_by ("host": torch's toolchain ran
    in the host's toolchain service; "here": in this process; absent on the fast path)."""
    with _lock:
        return [dict(record) for record in _records]


def _record(**fields: Any) -> dict:
    record = {"name": "", "path": "fallback", "reason": "", "seconds": 0.0, "kernels": [], "kernel_names": [],
              "cache_hit": False, "key": "", "split_seconds": 0.0, "nvrtc_seconds": 0.0, "gxx_seconds": 0.0,
              "error": ""}
    record.update(fields)
    with _lock:
        _records.append(record)
    return record


def _make_replacement(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def load_inline(*args: Any, **kwargs: Any) -> Any:
        return _load_inline(args, kwargs)

    load_inline.__dicebench_fastpath__ = True  # type: ignore[attr-defined]
    return load_inline


def _string_list(value: Any, what: str, allow_str: bool = True) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        if allow_str:
            return [value]
        raise FastPathUnavailable(f"{what} is a string, not a list")
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise FastPathUnavailable(f"{what} is not a string or a list of strings")


def _function_names(functions: Any) -> list[str]:
    if functions is None:
        raise FastPathUnavailable("load_inline without functions (the candidate binds its own module)")
    if isinstance(functions, str):
        names = [functions]
    elif isinstance(functions, list):
        names = list(functions)
    elif isinstance(functions, dict):
        names = list(functions.keys())
    else:
        raise FastPathUnavailable(f"functions is a {type(functions).__name__}")
    for name in names:
        if not isinstance(name, str) or not _NAME.match(name):
            raise FastPathUnavailable(f"function name {name!r} is not a C++ name")
    return names


def _request(state: _State, arguments: dict) -> dict:
    """The native compile request for a bound load_inline call; raises FastPathUnavailable."""
    if arguments.get("sycl_sources"):
        raise FastPathUnavailable("sycl_sources")
    if not arguments.get("is_python_module", True):
        raise FastPathUnavailable("is_python_module=False")
    if _foreign_include_paths(state, arguments):
        raise FastPathUnavailable("extra_include_paths (other than torch's own)")
    if arguments.get("no_implicit_headers", False):
        raise FastPathUnavailable("no_implicit_headers=True")
    # As torch does: `cuda_sources or []`.
    cuda_sources = _string_list(arguments.get("cuda_sources") or None, "cuda_sources")
    if cuda_sources and arguments.get("with_cuda") is False:
        raise FastPathUnavailable("with_cuda=False with cuda_sources")
    name = arguments.get("name")
    if not isinstance(name, str):
        raise FastPathUnavailable("name is not a string")
    return {
        "name": name,
        "cpp_sources": _string_list(arguments.get("cpp_sources"), "cpp_sources"),
        "cuda_sources": cuda_sources,
        "functions": _function_names(arguments.get("functions")),
        "extra_cflags": _string_list(arguments.get("extra_cflags"), "extra_cflags", allow_str=False),
        "extra_cuda_cflags": _string_list(arguments.get("extra_cuda_cflags"), "extra_cuda_cflags", allow_str=False),
        "extra_ldflags": _string_list(arguments.get("extra_ldflags"), "extra_ldflags", allow_str=False),
        "arch": state.arch,
    }


def _toolchain(state: _State) -> dict:
    toolchain = dict(state.native.default_toolchain())
    for key, env in (("shim_dir", "DICEBENCH_FASTPATH_SHIM_DIR"),
                     ("device_shim_dir", "DICEBENCH_FASTPATH_DEVICE_SHIM_DIR")):
        if os.environ.get(env):
            toolchain[key] = os.environ[env]
    toolchain.update(state.toolchain_overrides)
    toolchain["cache_dir"] = state.cache_dir
    return toolchain


def _compiled_only(name: str, functions: list[str]) -> types.ModuleType:
    module = types.ModuleType(name)

    def stub(function: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(f"{name}.{function}: compiled by dicebench_fastpath in compile-only mode, not loaded")

        call.__name__ = function
        return call

    for function in functions:
        setattr(module, function, stub(function))
    return module


def _load(state: _State, name: str, outcome: dict) -> types.ModuleType:
    """The module of a compiled entry, loaded into this process; raises FastPathUnavailable."""
    kernels = [tuple(k) for k in outcome["kernels"]]
    if kernels:
        import torch

        if not torch.cuda.is_available():
            raise FastPathUnavailable("no CUDA device to load the kernels on")
        torch.cuda.init()
    try:
        functions = state.native.load(outcome["entry_dir"], kernels)
    except Exception as error:  # noqa: BLE001 - a load failure sends the call to torch's toolchain
        raise FastPathUnavailable(f"load: {error}") from None
    module = types.ModuleType(name)
    module.__file__ = os.path.join(outcome["entry_dir"], "glue.so")
    for function, callable_ in functions.items():
        setattr(module, function, callable_)
    return module


def failed_sources(reason: str) -> str:
    """The sources whose compile failed on the fast path, by its reason: "cuda_sources" (NVRTC, or
    g++ on the CUDA sources' host part), "cpp_sources" (g++ on cpp_sources), else "" (declined for
    another reason). torch's toolchain compiles those first (a hint for the order of its work,
    never for its outcome)."""
    if reason.startswith(("NVRTC:", "g++ (cuda_sources glue)")):
        return "cuda_sources"
    if reason.startswith("g++ (cpp_sources glue)"):
        return "cpp_sources"
    return ""


def _load_inline(args: tuple, kwargs: dict) -> Any:
    state = _state
    if state is None:  # uninstalled while a reference to the replacement survived
        import torch.utils.cpp_extension as cpp_extension

        return cpp_extension.load_inline(*args, **kwargs)
    started = time.perf_counter()
    name = args[0] if args else kwargs.get("name", "")
    reason = ""
    outcome: Optional[dict] = None
    arguments: Optional[dict] = None
    try:
        try:
            bound = state.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise FastPathUnavailable(f"arguments do not fit load_inline: {error}") from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        if not state.fast:
            raise FastPathUnavailable("fast path not requested")
        if state.native is None:
            raise FastPathUnavailable(f"fast path unavailable: {state.native_error}")
        request = _request(state, arguments)
        outcome = (state.compiler(request) if state.compiler is not None
                   else state.native.compile(request, _toolchain(state)))
        if not outcome["ok"]:
            raise FastPathUnavailable(outcome["reason"])
        module = (_compiled_only(request["name"], request["functions"]) if state.compile_only
                  else _load(state, request["name"], outcome))
    except FastPathUnavailable as declined:
        reason = str(declined)
    except Exception as error:  # noqa: BLE001 - never let the fast path break a candidate
        reason = f"fast path error: {type(error).__name__}: {error}"
    details = {}
    if outcome is not None:
        details = {"cache_hit": bool(outcome["cache_hit"]), "key": outcome["key"],
                   "split_seconds": outcome["split_seconds"], "nvrtc_seconds": outcome["nvrtc_seconds"],
                   "gxx_seconds": outcome["gxx_seconds"],
                   "kernel_names": [expr for expr, _ in outcome["kernels"]]}
    if not reason and outcome is not None:  # the fast path compiled
        seconds = time.perf_counter() - started
        _record(name=name, path="nvrtc", seconds=seconds, kernels=[lowered for _, lowered in outcome["kernels"]],
                **details)
        state.log(f"dicebench_fastpath: {name}: nvrtc path in {seconds:.3f} s"
                  f"{' (cache hit)' if details.get('cache_hit') else ''}")
        return module
    state.log(f"dicebench_fastpath: {name}: torch's toolchain: {reason.splitlines()[0] if reason else ''}")
    try:
        result = NotImplemented
        if state.builder is not None and arguments is not None:
            details["built_by"] = "host"
            result = state.builder(arguments, failed_sources(reason))
            if result is NotImplemented:
                details["built_by"] = "here"
        if result is NotImplemented:
            result = state.original(*args, **kwargs)
    except BaseException as error:
        _record(name=name, path="fallback", reason=reason, seconds=time.perf_counter() - started,
                error=f"{type(error).__name__}: {error}"[:2000], **details)
        raise
    _record(name=name, path="fallback", reason=reason, seconds=time.perf_counter() - started, **details)
    return result
