"""A precompiled torch/extension.h for torch's toolchain builds: the heaviest compile of a
load_inline build is main.cpp's, and most of it is torch/extension.h (about 20 s of the compiler
on its own; half of that with the header precompiled, the same object code).

A header is made with exactly the flags torch's build.ninja gives main.cpp's compile (`cxx`,
`cflags` without the extension's name macro, `post_cflags`), and is named by a key of those flags.
A build whose flags have a made header adds `-include <folder>/<key>/torch_extension.h` to its
`cflags`: main.cpp's first line includes torch/extension.h anyway, so the translation unit is the
same. GCC itself checks that a precompiled header fits the compile it is offered to (the compiler,
the macros it depends on, the options that matter) and, where not, compiles the plain header
(`torch_extension.h` includes torch/extension.h), so a header never changes an outcome.

The host makes headers only from calls whose flags carry no path (toolchain_builds.cpp), in a
worker that builds nothing else, and keeps them read-only for the builds.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess

HEADER = "torch_extension.h"
STUB = "#include <torch/extension.h>\n"
_NAME_MACRO = re.compile(r"-DTORCH_EXTENSION_NAME=\S+ ?")
_CFLAGS_LINE = re.compile(r"^cflags = (.*)$", re.M)


def _variable(ninja: str, name: str) -> str:
    found = re.search(rf"^{name} = ?(.*)$", ninja, re.M)
    return found.group(1) if found else ""


def compile_flags(ninja: str) -> tuple[str, str, str] | None:
    """main.cpp's compiler, flags (the name macro dropped) and trailing flags in a build.ninja's
    text; None without a `cflags` line."""
    if not _CFLAGS_LINE.search(ninja):
        return None
    return _variable(ninja, "cxx"), _NAME_MACRO.sub("", _variable(ninja, "cflags")).strip(), _variable(ninja, "post_cflags")


def key_of(flags: tuple[str, str, str]) -> str:
    """The name of the header made with these flags."""
    return hashlib.sha256("\n".join(flags).encode()).hexdigest()[:32]


def use(build_directory: str, folder: str) -> bool:
    """Offers main.cpp's compile in build_directory the header made with its flags under `folder`,
    where there is one; whether it did."""
    path = os.path.join(build_directory, "build.ninja")
    with open(path, encoding="utf-8") as file:
        ninja = file.read()
    flags = compile_flags(ninja)
    if flags is None:
        return False
    header = os.path.join(folder, key_of(flags), HEADER)
    if not os.path.isfile(header + ".gch"):
        return False
    argument = " -include " + shlex.quote(header).replace("$", "$$")  # a ninja value: $ escaped
    ninja = _CFLAGS_LINE.sub(lambda line: line.group(0) + argument, ninja, count=1)
    with open(path, "w", encoding="utf-8") as file:
        file.write(ninja)
    return True


def make(build_directory: str, folder: str) -> str:
    """Makes `folder`/torch_extension.h.gch with the flags of build_directory's build.ninja, as its
    compile rule would run the compiler (through the shell, as ninja does); returns its key.
    Raises RuntimeError with the compiler's output when it fails."""
    with open(os.path.join(build_directory, "build.ninja"), encoding="utf-8") as file:
        flags = compile_flags(file.read())
    if flags is None:
        raise RuntimeError("torch's build.ninja has no cflags")
    os.makedirs(folder, exist_ok=True)
    header = os.path.join(folder, HEADER)
    with open(header, "w", encoding="utf-8") as file:
        file.write(STUB)
    cxx, cflags, post_cflags = flags
    command = f"{cxx} {cflags} -x c++-header {shlex.quote(header)} -o {shlex.quote(header + '.gch')} {post_cflags}"
    done = subprocess.run(command, shell=True, cwd=build_directory, stdout=subprocess.PIPE,  # as ninja runs it: through the shell
                          stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"making the precompiled header failed: {done.stdout.decode(errors='replace')[-4000:]}")
    return key_of(flags)
