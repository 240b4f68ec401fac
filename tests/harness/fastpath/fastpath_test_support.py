"""Helpers shared by the fast path's Python tests: the test candidates and running them."""

from __future__ import annotations

import os
import re
import sys
import types
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = os.path.join(HERE, "candidates")


def candidate_paths() -> list[str]:
    return sorted(os.path.join(CANDIDATES, f) for f in os.listdir(CANDIDATES) if f.endswith(".py"))


def candidate_header(path: str) -> dict:
    """The `# fastpath-test:` line: functions, expect (nvrtc|fallback), reason."""
    with open(path, encoding="utf-8") as handle:
        first = handle.readline()
    fields = dict(re.findall(r"(\w+)=(\S+)", first))
    fields["functions"] = fields.get("functions", "").split(",")
    fields.setdefault("expect", "nvrtc")
    fields.setdefault("reason", "")
    return fields


def exec_candidate(path: str, name: str = "candidate") -> types.ModuleType:
    """Executes a candidate file as a fresh module (as the harness's loading.load_program does)."""
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    module = types.ModuleType(f"fastpath_test_{name}_{abs(hash(path))}")
    module.__file__ = path
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    finally:
        sys.modules.pop(module.__name__, None)
    return module


def cudnn_in_toolkit(toolchain: dict) -> bool:
    """cudnn.h and libcudnn.so where the fast path's glue compiler looks (a candidate header's
    requires=cudnn)."""
    return (os.path.exists(os.path.join(toolchain["cuda_include_dir"], "cudnn.h"))
            and os.path.exists(os.path.join(toolchain["cuda_library_dir"], "libcudnn.so")))


def native_available() -> bool:
    try:
        import torch  # noqa: F401
        import dicebench_fastpath_native  # noqa: F401
    except ImportError:
        return False
    return True


def flatten(outputs: Any) -> list:
    if isinstance(outputs, (list, tuple)):
        return [x for o in outputs for x in flatten(o)]
    return [outputs]
