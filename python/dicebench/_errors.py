"""The package's exceptions beyond dicebench.Error (which the compiled module raises for a missing
or foreign database, a newer schema, a run that does not exist, a failing harness)."""

from ._dicebench import Error


class ProblemError(Error, ValueError):
    """A problem evaluate() was given cannot be used: its reference cannot be built or run (not
    Python, without Model, get_inputs or get_init_inputs, or raising), or it is no problem of the
    suite. Evaluator.judge() gives such an item the status "problem_failed" instead."""
