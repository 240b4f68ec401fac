"""Error kinds the handlers share, and the traceback tail that replies carry.

HostError: the request itself is wrong (an unknown job, a trial out of range, a device that is not
the worker's, a missing folder). The worker answers it with an "error" reply; it is never charged
to the problem or the candidate.

ShutdownRequested: the host sent shutdown (its job done), possibly while the worker waited in the
middle of a request for the host's answer to a request of its own; the worker loop ends on it.
"""

from __future__ import annotations

import traceback

TRACEBACK_LINES = 20


class HostError(Exception):
    """A request that cannot be served as sent: the host's mistake, not the program's."""


class ShutdownRequested(Exception):
    """The host asked the worker to end (a shutdown request, with its job)."""

    def __init__(self, job: str):
        super().__init__(job)
        self.job = job


def traceback_tail(error: BaseException, lines: int = TRACEBACK_LINES) -> str:
    """The last `lines` lines of the formatted traceback of error."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


def exception_line(error: BaseException) -> str:
    """'ExceptionType: message' (first 2000 characters)."""
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    return text[:2000]
