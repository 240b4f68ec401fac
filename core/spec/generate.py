#!/usr/bin/env python3
"""Generates the C++ and Python code of dicebench's one spec (core/spec/*.toml).

    generate.py --cpp-dir DIR --python FILE [--python FILE ...] [--record-python FILE] [--overlay TOML ...]

Reads vocabulary.toml, evaluation.toml and protocol.toml beside this file and writes
  DIR/core/spec/vocabulary.hpp         the vocabularies: enum classes, names, parsing, groups
  DIR/core/spec/evaluation.hpp/.cpp    the evaluation record, its JSON both ways, worker replies read
                                       into it, `dicebench eval`'s text
  DIR/core/spec/evaluation_store.hpp/.cpp
                                       the results database's shape of it: results::StoredEvaluation,
                                       its columns (with their schema versions), details JSON,
                                       binding and reading, and the flat export record
  DIR/core/spec/protocol.hpp/.cpp      the worker protocol's version and the host's requests
  each --python FILE                   dicebench_spec: vocabularies, protocol messages and the
                                       record's field table as Python data
  --record-python FILE                 the dicebench package's Evaluation and Timing dataclasses
Files are rewritten only when their text changes (a build does not redo what depends on them).
--overlay adds the fields, columns, details, exports, attributes and text lines of another TOML to
evaluation.toml's (the test that a field added in one place reaches every output uses it).
A spec that does not hold together is one error line and exit status 1.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from specgen.cpp_protocol import gen_protocol_cpp, gen_protocol_hpp
from specgen.cpp_record import gen_evaluation_cpp, gen_evaluation_hpp
from specgen.cpp_store import gen_store_cpp, gen_store_hpp
from specgen.cpp_vocabulary import gen_vocabulary_hpp
from specgen.model import SpecError, load
from specgen.python_out import gen_python_spec, gen_record_python


def write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpp-dir", type=pathlib.Path)
    parser.add_argument("--python", type=pathlib.Path, action="append", default=[])
    parser.add_argument("--record-python", type=pathlib.Path, action="append", default=[])
    parser.add_argument("--overlay", type=pathlib.Path, action="append", default=[])
    args = parser.parse_args()
    try:
        spec = load(args.overlay)
        outputs: dict[pathlib.Path, str] = {}
        if args.cpp_dir:
            base = args.cpp_dir / "core" / "spec"
            outputs[base / "vocabulary.hpp"] = gen_vocabulary_hpp(spec)
            outputs[base / "evaluation.hpp"] = gen_evaluation_hpp(spec)
            outputs[base / "evaluation.cpp"] = gen_evaluation_cpp(spec)
            outputs[base / "evaluation_store.hpp"] = gen_store_hpp(spec)
            outputs[base / "evaluation_store.cpp"] = gen_store_cpp(spec)
            outputs[base / "protocol.hpp"] = gen_protocol_hpp(spec)
            outputs[base / "protocol.cpp"] = gen_protocol_cpp(spec)
        for path in args.python:
            outputs[path] = gen_python_spec(spec)
        for path in args.record_python:
            outputs[path] = gen_record_python(spec)
    except SpecError as error:
        print(f"generate.py: {error}", file=sys.stderr)
        return 1
    for path, text in outputs.items():
        write(path, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
