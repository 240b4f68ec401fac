"""Loading a problem or candidate program from source text into a fresh module.

load_program() writes the source to a file in a folder the caller gives (so tracebacks, linecache
and inspect.getsource see real lines, and tools that need a file, such as Triton's JIT, work),
creates a types.ModuleType with a unique name and registers it in sys.modules before executing the
code (so dataclasses, typing and pickling by qualified name resolve the module), then executes it.
The module's __name__ is that unique name, never "__main__", so `if __name__ == "__main__":` blocks
do not run. unload_program() takes it out of sys.modules again.

A candidate is loaded after its problem's source, in one namespace, as KernelBench's eval loads it
(exec of the problem's source, then of the candidate's, in one dict): given problem_source,
load_program executes that first in the module's dict, from a file of its own beside the program's,
so the program sees the names the problem defines (Model, get_inputs, its module-level constants)
and its own definitions override them. ModelNew, the name the harness looks up in a candidate, is
the candidate's alone: one the problem's source binds is dropped before the candidate's code runs.
An exception from the problem's source (or its SyntaxError) is raised as ProblemSourceError, from
it, before any of the program's code has run.

find_model_class() and find_function() look up Model / ModelNew, get_inputs and get_init_inputs
with errors that say what is missing.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import sys
import types
from typing import Any, Callable

_counter = itertools.count(1)


class ProgramError(Exception):
    """A program lacks something the harness needs (a class, a function) or has the wrong kind."""


class ProblemSourceError(Exception):
    """The problem's source, run ahead of a program in its namespace, raised (its exception is the
    __cause__); none of the program's code has run."""


# What the harness looks up in a candidate: never taken from the problem's source run ahead of it.
_PROGRAM_OWN_NAMES = ("ModelNew",)


def _safe_stem(text: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_]", "_", text)[:60].strip("_")
    return stem or "program"


def _write_source(path: str, source: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(source)


def load_program(source: str, *, kind: str, name_hint: str, directory: str,
                 problem_source: str = "") -> types.ModuleType:
    """Execute source as a new module; returns the module.

    kind ("problem" or "candidate") and name_hint only shape the module and file names. The file
    is written to directory/<kind>_<hint>_<n>.py (mode 0600; n counts loads in this process, so
    two loads never share a file). Exceptions raised by compiling or
    executing the source propagate unchanged (SyntaxError, or whatever the code raised); the module
    is then taken out of sys.modules again.

    problem_source (a candidate's problem), when not empty, is written to
    directory/problem_<hint>_<n>.py and executed first in the module's dict (the module's __file__
    is its file meanwhile), then ModelNew is dropped from the dict and source runs there: a failure
    of the problem's source raises ProblemSourceError from it, before source runs.
    """
    number = next(_counter)
    stem = f"{kind}_{_safe_stem(name_hint)}"
    path = os.path.join(directory, f"{stem}_{number}.py")
    problem_code, problem_path = None, ""
    if problem_source:
        problem_path = os.path.join(directory, f"problem_{_safe_stem(name_hint)}_{number}.py")
        _write_source(problem_path, problem_source)
        try:
            problem_code = compile(problem_source, problem_path, "exec", dont_inherit=True)
        except BaseException as error:
            raise ProblemSourceError(f"the problem's source does not compile: {type(error).__name__}") from error
    _write_source(path, source)
    module_name = f"dicebench_{stem}_{number}_{secrets.token_hex(4)}"
    module = types.ModuleType(module_name)
    code = compile(source, path, "exec", dont_inherit=True)
    sys.modules[module_name] = module
    try:
        if problem_code is not None:
            module.__file__ = problem_path
            try:
                exec(problem_code, module.__dict__)
            except BaseException as error:
                raise ProblemSourceError(f"the problem's source raised {type(error).__name__}") from error
            for name in _PROGRAM_OWN_NAMES:
                module.__dict__.pop(name, None)
        module.__file__ = path
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def unload_program(module: types.ModuleType | None) -> None:
    if module is not None and sys.modules.get(module.__name__) is module:
        del sys.modules[module.__name__]


def find_model_class(module: types.ModuleType, name: str) -> type:
    """The nn.Module subclass called name in module."""
    import torch

    what = "problem" if name == "Model" else "candidate"
    if not hasattr(module, name):
        raise ProgramError(f"the {what} defines no class {name}")
    cls = getattr(module, name)
    if not isinstance(cls, type):
        raise ProgramError(f"{name} in the {what} is a {type(cls).__name__}, not a class")
    if not issubclass(cls, torch.nn.Module):
        raise ProgramError(f"{name} in the {what} is not a subclass of torch.nn.Module")
    return cls


def find_function(module: types.ModuleType, name: str, *, what: str = "problem") -> Callable[..., Any]:
    if not hasattr(module, name):
        raise ProgramError(f"the {what} defines no function {name}()")
    function = getattr(module, name)
    if not callable(function):
        raise ProgramError(f"{name} in the {what} is a {type(function).__name__}, not a function")
    return function
