"""Checks that problem and candidate sources are what they claim to be, before any worker sees
them (without executing them)."""

import ast

from ._errors import CandidateError, ProblemError


def _check_source(source: str, what: str, names: tuple[str, ...], error: type[Exception]) -> None:
    """Raises `error` unless `source` parses as Python and defines every one of `names` (a class,
    function, assignment or import of that name anywhere in it). Nothing is executed."""
    if not source.strip():
        raise error(f"the {what} is empty")
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise error(f"the {what} is not valid Python: line {e.lineno}: {e.msg}") from None
    except ValueError as e:  # null bytes
        raise error(f"the {what} is not valid Python: {e}") from None
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.alias):
            defined.add(node.asname or node.name.split(".")[0])
    missing = [name for name in names if name not in defined]
    if missing:
        raise error(f"the {what} defines no {', '.join(missing)}")


def check_problem(source: str) -> None:
    """Raises ProblemError unless the source defines Model, get_inputs and get_init_inputs."""
    _check_source(source, "problem", ("Model", "get_inputs", "get_init_inputs"), ProblemError)


def check_candidate(source: str) -> None:
    """Raises CandidateError unless the source defines ModelNew."""
    _check_source(source, "candidate", ("ModelNew",), CandidateError)
