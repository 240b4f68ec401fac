"""The package's exceptions beyond dicebench.Error (which the compiled module raises for a missing
or foreign database, a newer schema, a run that does not exist, a failing harness)."""

from ._dicebench import Error


class CandidateError(Error, ValueError):
    """The candidate source is not a candidate: empty, not Python, or without class ModelNew."""


class ProblemError(Error, ValueError):
    """The problem source is not a problem: empty, not Python, or without Model, get_inputs and
    get_init_inputs."""
