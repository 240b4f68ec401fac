"""The toolchain role: builds one load_inline call with torch's own toolchain (ninja, nvcc, g++),
for the host, outside any candidate's process.

A candidate whose load_inline call the fast path declines (or that is re-judged with torch's
toolchain) asks the host for the build (candidate.toolchain); the host looks the call up in its
content-addressed toolchain cache and, on a miss, starts a fresh worker of this role in the
candidate sandbox, whose only writable folder is the build folder, and sends it one
toolchain.build. The worker calls torch.utils.cpp_extension.load_inline with the candidate's own
arguments and environment (the variables in BUILD_ENVIRONMENT, as the candidate's process had them
when it called) into that folder, and never imports what it built: no code of the candidate runs
here. The host copies the built module out of the folder into the cache; the candidate imports it
from there, read-only, as torch's load_inline would have.

Handlers:
- toolchain.describe: what the build's outcome depends on besides the call (torch, its CUDA,
  Python, the compilers torch would use); part of the host's cache key.
- toolchain.build: the build; ok with the module's file name, or the error torch raised. With
  pch_dir, main.cpp's compile is offered the precompiled torch/extension.h made with its flags
  (precompiled_header.py), where the host has one.
- toolchain.pch: makes that header for a call the host wrote (flags only, no sources), and builds
  nothing else.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from typing import Any

from . import precompiled_header
from .errors import HostError, exception_line

# Environment variables torch.utils.cpp_extension reads when it builds: their values, as the
# candidate had them at the call, are part of the request (and of the cache key).
BUILD_ENVIRONMENT = ("TORCH_CUDA_ARCH_LIST", "CXX", "CC", "CUDA_HOME", "CUDA_PATH", "PYTORCH_NVCC",
                     "NVCC_CCBIN", "TORCH_DONT_CHECK_COMPILER_ABI", "TORCH_NVCC_FLAGS")
# load_inline's arguments the service takes (torch's signature); build_directory is the service's
# own, so a call that sets it stays in the candidate's process.
SERVICE_ARGUMENTS = ("name", "cpp_sources", "cuda_sources", "sycl_sources", "functions", "extra_cflags",
                     "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags", "extra_include_paths",
                     "verbose", "with_cuda", "with_sycl", "is_python_module", "with_pytorch_error_handling",
                     "keep_intermediates", "use_pch", "no_implicit_headers")
MESSAGE_BYTES = 20000
# A call's compile_first (the sources whose compile failed on the fast path): the rule of torch's
# build.ninja that compiles them.
FIRST_RULES = {"cuda_sources": "cuda_compile", "cpp_sources": "compile"}
# The arguments of a toolchain.pch call (the host writes them: flags without paths, no sources).
PCH_ARGUMENTS = ("name", "cpp_sources", "extra_cflags", "with_cuda")


class ToolchainRole:
    """A toolchain worker: describes its toolchain, and builds what it is asked to."""

    def __init__(self) -> None:
        self.niceness = 0  # the nice(2) increment taken so far (it cannot be given back)

    def lower_priority(self, niceness: int) -> None:
        """Runs this worker, and the compilers it starts, `niceness` below where it started: a
        toolchain.build's niceness (the host's kTimedBuildNiceness while candidates are timed, so a
        timed call on the same core comes first; 0 otherwise, where builds are the longest path)."""
        if niceness > self.niceness:
            os.nice(niceness - self.niceness)
            self.niceness = niceness

    def handlers(self) -> dict:
        return {"toolchain.describe": self.describe, "toolchain.build": self.build, "toolchain.pch": self.make_pch}

    def describe(self, request: dict) -> dict:
        import torch
        import torch.utils.cpp_extension as cpp_extension

        def version(command: list[str]) -> str:
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
                return (done.stdout or done.stderr).strip()[-2000:]
            except Exception as error:  # noqa: BLE001 - a missing compiler fails the build, not this
                return f"unavailable: {exception_line(error)}"

        cuda_home = cpp_extension.CUDA_HOME or ""
        nvcc = os.path.join(cuda_home, "bin", "nvcc") if cuda_home else "nvcc"
        cxx = os.environ.get("CXX", "c++")
        fingerprint = {"torch": torch.__version__, "torch_cuda": str(torch.version.cuda), "python": platform.python_version(),
                       "cuda_home": cuda_home, "nvcc": version([nvcc, "--version"]), "cxx": cxx,
                       "cxx_version": version([cxx, "--version"]),
                       "environment": {name: os.environ.get(name) for name in BUILD_ENVIRONMENT}}
        return {"type": "toolchain.described", "job": request["job"], "fingerprint": fingerprint}

    def build(self, request: dict) -> dict:
        import torch.utils.cpp_extension as cpp_extension

        build_dir = _build_dir(request)
        self.lower_priority(request["niceness"])
        call = request["call"]
        arguments = call["arguments"]
        unknown = set(arguments) - set(SERVICE_ARGUMENTS)
        if unknown or not isinstance(arguments.get("name"), str):
            raise HostError(f"a build request with arguments {sorted(unknown)} or without a name")
        _set_environment(call)
        # torch imports the module it built; here it is only built, never run.
        cpp_extension._import_module_from_library = lambda *args, **kwargs: None  # noqa: SLF001
        # main.cpp begins with torch/extension.h unless the call says otherwise: only then is the
        # precompiled one the same translation unit.
        pch_dir = request["pch_dir"] if not (arguments.get("no_implicit_headers") or arguments.get("use_pch")) else ""
        steps = _NinjaSteps(cpp_extension, FIRST_RULES.get(call.get("compile_first") or ""), pch_dir)
        cpp_extension._run_ninja_build = steps.run  # noqa: SLF001
        started = time.perf_counter()
        reply = {"type": "toolchain.built", "job": request["job"], "ok": False, "message": "",
                 "module_file": "", "seconds": 0.0, "pch_used": False}
        try:
            cpp_extension.load_inline(**arguments, build_directory=build_dir)
        except BaseException as error:  # noqa: BLE001 - the candidate's sources may fail in any way
            text = f"{type(error).__name__}: {error}"
            reply.update(message=text if len(text) <= MESSAGE_BYTES else
                         text[:MESSAGE_BYTES // 2] + "\n...\n" + text[-MESSAGE_BYTES // 2:])
        else:
            module_file = arguments["name"] + (".pyd" if os.name == "nt" else ".so")
            if not os.path.isfile(os.path.join(build_dir, module_file)):
                raise HostError(f"torch's toolchain reported success but built no {module_file}")
            reply.update(ok=True, module_file=module_file)
        reply.update(seconds=time.perf_counter() - started, pch_used=steps.pch_used)
        return reply

    def make_pch(self, request: dict) -> dict:
        """Writes the build.ninja torch gives the call, then makes the precompiled header with its
        flags into build_dir/pch instead of building."""
        import torch.utils.cpp_extension as cpp_extension

        build_dir = _build_dir(request)
        call = request["call"]
        arguments = call["arguments"]
        if set(arguments) - set(PCH_ARGUMENTS) or arguments.get("cpp_sources"):
            raise HostError(f"a precompiled header's call takes {PCH_ARGUMENTS} and no sources, not {sorted(arguments)}")
        _set_environment(call)
        made: dict = {}

        def make_header(build_directory: str, verbose: bool, error_prefix: str) -> None:
            made["key"] = precompiled_header.make(build_directory, os.path.join(build_dir, "pch"))

        cpp_extension._run_ninja_build = make_header  # noqa: SLF001
        cpp_extension._import_module_from_library = lambda *args, **kwargs: None  # noqa: SLF001
        started = time.perf_counter()
        reply = {"type": "toolchain.pch_made", "job": request["job"], "ok": False, "message": "", "key": "",
                 "seconds": 0.0}
        try:
            cpp_extension.load_inline(**arguments, build_directory=build_dir)
        except Exception as error:  # noqa: BLE001 - reported to the host, which then builds without it
            reply["message"] = exception_line(error)[:MESSAGE_BYTES]
        else:
            reply.update(ok="key" in made, key=made.get("key", ""))
        reply["seconds"] = time.perf_counter() - started
        return reply


def _build_dir(request: dict) -> str:
    if not os.path.isdir(request["build_dir"]):
        raise HostError(f"build_dir {request['build_dir']!r} is not a directory")
    return request["build_dir"]


def _set_environment(call: dict) -> None:
    """The candidate's environment at the call, nothing else, for the variables torch's build reads."""
    for name in BUILD_ENVIRONMENT:
        value = call["environment"].get(name)
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)


class _NinjaSteps:
    """torch's _run_ninja_build for one build: offers main.cpp's compile the precompiled header
    (when pch_dir is given and holds one for its flags), compiles the objects of `first_rule` first
    when given (_compile_first), then runs torch's whole build."""

    def __init__(self, cpp_extension: Any, first_rule: str | None, pch_dir: str):
        self.run_whole = cpp_extension._run_ninja_build  # noqa: SLF001
        self.cpp_extension = cpp_extension
        self.first_rule = first_rule
        self.pch_dir = pch_dir
        self.pch_used = False

    def run(self, build_directory: str, verbose: bool, error_prefix: str) -> None:
        if self.pch_dir:
            self.pch_used = precompiled_header.use(build_directory, self.pch_dir)
        if self.first_rule:
            _compile_first(self.cpp_extension, self.first_rule, build_directory, verbose, error_prefix)
        self.run_whole(build_directory, verbose, error_prefix)


def _compile_first(cpp_extension: Any, rule: str, build_directory: str, verbose: bool, error_prefix: str) -> None:
    """Compiles the objects of `rule` in torch's build.ninja before anything else, and fails as
    torch fails (its error prefix, then what ninja printed) when one of them does: the sources the
    fast path could not compile are the likely failure, and a build that fails there need not
    compile the others (torch's heaviest compile, of torch/extension.h, is main.cpp's). The
    commands are torch's own; a build fails when any of them fails, in whichever order they run,
    so the outcome is the one a whole build gives."""
    import re

    with open(os.path.join(build_directory, "build.ninja"), encoding="utf-8") as file:
        targets = [m.group(1) for m in re.finditer(r"^build (\S+): (\S+) ", file.read(), re.M) if m.group(2) == rule]
    if not targets:
        return
    command = ["ninja", "-v"]
    workers = cpp_extension._get_num_workers(verbose)  # noqa: SLF001 - as torch's own build
    if workers is not None:
        command += ["-j", str(workers)]
    done = subprocess.run(command + targets, cwd=build_directory, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, check=False, env=os.environ.copy())
    if done.returncode != 0:
        output = done.stdout.decode(*cpp_extension.SUBPROCESS_DECODE_ARGS)
        raise RuntimeError(f"{error_prefix}: {output}" if output else error_prefix)


def request_for(arguments: dict[str, Any], arch_list: str | None, private_dir: str) -> dict | None:
    """The build request for a load_inline call bound to torch's signature (defaults applied), or
    None when the service cannot take it: a build_directory of its own, is_python_module=False,
    values that are not plain JSON, extra_include_paths that are not absolute (or under /proc), or
    any argument naming `private_dir` (the candidate's job folder, which the build cannot see:
    files the candidate wrote there). `arch_list` is what torch would use for TORCH_CUDA_ARCH_LIST
    in the calling process when it is unset there."""
    include_paths = arguments.get("extra_include_paths") or []
    if isinstance(include_paths, str):
        include_paths = [include_paths]
    if (arguments.get("build_directory") or not arguments.get("is_python_module", True)
            or not isinstance(include_paths, (list, tuple))
            or any(not isinstance(path, str) or not os.path.isabs(path) or path.startswith("/proc")
                   for path in include_paths)):
        return None
    taken: dict[str, Any] = {}
    for name, value in arguments.items():
        if name == "build_directory":
            continue
        if name not in SERVICE_ARGUMENTS or not _plain(value) or _names(value, private_dir):
            return None
        taken[name] = value
    environment = {name: os.environ.get(name) for name in BUILD_ENVIRONMENT}
    if not environment["TORCH_CUDA_ARCH_LIST"] and arch_list:
        environment["TORCH_CUDA_ARCH_LIST"] = arch_list
    return {"arguments": taken, "environment": environment}


def default_arch_list() -> str | None:
    """What torch.utils.cpp_extension uses for TORCH_CUDA_ARCH_LIST when it is unset: the visible
    devices' capabilities, clamped to what torch was built for, the last with +PTX; None without
    a visible device."""
    import re

    import torch

    if not torch.cuda.is_available():
        return None
    arches: list[str] = []
    supported = [int("".join(re.findall(r"\d+", arch.split("_")[1]))) for arch in torch.cuda.get_arch_list()
                 if "sm_" in arch]
    for index in range(torch.cuda.device_count()):
        capability = torch.cuda.get_device_capability(index)
        if supported:
            capability = min(max((sm // 10, sm % 10) for sm in supported), capability)
        arch = f"{capability[0]}.{capability[1]}"
        if arch not in arches:
            arches.append(arch)
    if not arches:
        return None
    arches = sorted(arches)
    arches[-1] += "+PTX"
    return ";".join(arches)


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item) for key, item in value.items())
    return False


def _names(value: Any, folder: str) -> bool:
    """Whether a string in value mentions folder (or its real path)."""
    folders = {f for f in (folder, os.path.realpath(folder)) if f}
    if isinstance(value, str):
        return any(f in value for f in folders)
    if isinstance(value, (list, tuple)):
        return any(_names(item, folder) for item in value)
    if isinstance(value, dict):
        return any(_names(item, folder) for item in value.values())
    return False
