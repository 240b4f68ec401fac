#!/usr/bin/env python3
"""Structure figures of a dicebench tree: how many source files name
each verdict, the largest functions (universal-ctags), and #include arrows that run against the
layers, as JSON on stdout. Usage: structure_report.py TREE (a checkout, or `git archive REV` unpacked).
Tests, tools, test data and docs are left out; "naming a verdict" means spelling it as a string.
Needs universal-ctags."""
import json, os, re, subprocess, sys

VERDICTS = ["extraction_failed", "compile_failed", "runtime_error", "timeout", "crashed",
            "shape_mismatch", "dtype_mismatch", "output_mismatch", "correct"]
SOURCE_EXT = (".cpp", ".hpp", ".h", ".py", ".sql", ".in")
# Lower number = lower layer. A file may include its own layer or lower ones.
LAYERS = [("core/base/", 0), ("plugins/include/", 0), ("results/", 1), ("harness/", 2),
          ("core/host/", 3), ("core/run/", 4), ("core/cli/", 5), ("python/", 5),
          ("benchmarks/", 3), ("models/", 3), ("plugins/", 3)]

def layer(path):
    for prefix, rank in LAYERS:
        if path.startswith(prefix):
            return prefix, rank
    return None, None

def source_files(tree):
    for root, dirs, files in os.walk(tree):
        rel_root = os.path.relpath(root, tree)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "tests", "__pycache__")
                   and not (rel_root == "." and d in ("tools",))]
        for f in files:
            if f.endswith(SOURCE_EXT):
                yield os.path.relpath(os.path.join(root, f), tree)

def verdict_files(tree):
    out = {}
    for v in VERDICTS:
        pattern = re.compile(r"""["']%s["']""" % v)  # spelled as a string; Verdict::x is the enum, checked by the compiler
        out[v] = sorted(p for p in source_files(tree) if pattern.search(open(os.path.join(tree, p), errors="replace").read()))
    return out

def largest_functions(tree, count=10):
    files = [p for p in source_files(tree) if p.endswith((".cpp", ".py"))]
    tags = subprocess.run(["ctags", "-x", "--_xformat=%N\t%F\t%n\t%e\t%K", "--fields=+ne", "--kinds-C++=f", "--kinds-Python=fm",
                           "-o", "-"] + files, cwd=tree, capture_output=True, text=True).stdout
    funcs = []
    for line in tags.splitlines():
        parts = line.split("\t")
        if len(parts) < 4 or not parts[3].isdigit():
            continue
        funcs.append((int(parts[3]) - int(parts[2]) + 1, parts[0], parts[1], int(parts[2])))
    funcs.sort(reverse=True)
    return [{"lines": n, "function": name, "file": f, "line": l} for n, name, f, l in funcs[:count]]

def layer_violations(tree):
    bad = []
    include = re.compile(r'#include\s+"([^"]+)"')
    for p in source_files(tree):
        if not p.endswith((".cpp", ".hpp", ".h")):
            continue
        _, mine = layer(p)
        if mine is None:
            continue
        for target in include.findall(open(os.path.join(tree, p), errors="replace").read()):
            prefix, theirs = layer(target)
            if theirs is not None and theirs > mine and not (prefix and p.startswith(prefix)):
                bad.append(f"{p} -> {target}")
    return bad

if __name__ == "__main__":
    tree = sys.argv[1]
    report = {"verdict_files": {v: len(f) for v, f in verdict_files(tree).items()},
              "largest_functions": largest_functions(tree), "layer_violations": layer_violations(tree)}
    print(json.dumps(report, indent=1))
