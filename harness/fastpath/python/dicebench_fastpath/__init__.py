"""dicebench's fast compile path for candidates' torch.utils.cpp_extension.load_inline calls.

install(arch, cache_dir, log) replaces torch.utils.cpp_extension.load_inline in this process with
a version that compiles the same sources in about a second: the device code with NVRTC for the
GPU's architecture, the host glue with g++ against small shim headers whose torch API forwards to
real ATen (harness/fastpath/README.md). What the fast path cannot take goes to torch's own
load_inline, unchanged; compile_records() says, per call, which path was taken and why.

Call install() in the candidate's process before executing the candidate's source. Verdicts must
not depend on the path: both build the same functions from the same source; the fast path only
declines (falls back) where it cannot promise that.
"""

from __future__ import annotations

from ._load_inline import (
    calls,
    compile_records,
    detect_arch,
    install,
    installed,
    normalize_arch,
    uninstall,
)

__all__ = ["install", "uninstall", "installed", "calls", "compile_records", "detect_arch", "normalize_arch"]
