"""RemoteJudge: a client of `dicebench serve`, the reward service, with the judge() of
dicebench.Evaluator, so that every trainer adapter runs the same in-process or against a server
(DICEBENCH_URL). Standard library only (urllib), so a trainer's environment needs nothing more.

    POST {url}/v1/evaluate/batch
      {"items": [{"id", "problem", "completion" | "candidate"}, ...], "reward": {"shape", "params"},
       "timeout_s": seconds the server holds the request}
      -> 200 {"job", "status": "done", "done", "total", "results": [<Judgement JSON>, ...]}
      -> 202 {"job", "status": "running", ...}: not all judged within timeout_s

Each item carries an id (the caller's, else one made here, unique per item), and the service answers
an id it judged before from its store and shares one in flight, so a request is safe to send again.
That is how a 202 is waited out (the same request again: a long poll that judges nothing twice and
survives a restarted server), and how a request that failed on the way (a refused or dropped
connection, a timeout) or was turned away (429 when the queue is full, 503 while a server drains,
502, 504) is retried, after the Retry-After the service gave or an exponential backoff. A request
with more items than the server takes (413) is sent in parts of its limit. Any other error status is
the caller's mistake or the service's own failure, and raises RemoteError (a dicebench.Error) with
the service's message. An item's own failure is never an exception: it is its Judgement's status.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from typing import Any

import dicebench

from .._evaluate import judge_arguments

ENDPOINT = "/v1/evaluate/batch"
RETRIED_STATUSES = frozenset({429, 502, 503, 504})
_LIMIT = re.compile(r"at most (\d+)")


class RemoteError(dicebench.Error):
    """The reward service could not be reached, or refused a request (its message included)."""


class _TooMany(Exception):
    """413: the server takes at most `limit` items a request."""

    def __init__(self, message: str, limit: int):
        super().__init__(message)
        self.limit = limit


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class RemoteJudge:
    """judge() through `dicebench serve` at `url` (its base, such as "http://host:8000", or the full
    /v1/evaluate/batch address). token: sent as "Authorization: Bearer <token>" (default
    $DICEBENCH_TOKEN). wait: seconds the server holds a request for its results (timeout_s) before it
    answers 202 and the request is sent again. timeout: seconds a judge() call may take in all (None:
    no limit). retries: further tries of a request that failed on the way or was turned away, in a
    row; backoff: the first wait (doubling each time), max_wait: the longest wait, a Retry-After
    included. max_items: the most items one request carries (None: as many as the server takes);
    a call sent in parts cannot have a group-normalised reward (zscore)."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        wait: float = 300.0,
        timeout: float | None = None,
        retries: int = 5,
        backoff: float = 1.0,
        max_wait: float = 300.0,
        max_items: int | None = None,
    ):
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the reward service's URL starts with http:// or https://, not {url!r}")
        base = url.rstrip("/")
        self.url = base if base.endswith(ENDPOINT) else base + ENDPOINT
        self.token = os.environ.get("DICEBENCH_TOKEN") if token is None else token
        self.wait = float(wait)
        self.timeout = None if timeout is None else float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        if max_items is not None and max_items < 1:
            raise ValueError(f"max_items is a positive count or None, not {max_items!r}")
        self.max_items = max_items

    def __repr__(self) -> str:
        return f"RemoteJudge({self.url!r})"

    def judge(
        self,
        problems: str | Sequence[str],
        responses: Sequence[str],
        *,
        completions: bool = True,
        ids: Sequence[str] | None = None,
        reward: str | None = None,
        **reward_params: float,
    ) -> list[dicebench.Judgement]:
        """What dicebench.Evaluator.judge() gives for the same arguments, judged by the service: one
        Judgement per response, in input order. Items without an id of the caller's get a unique one
        here (their Judgement's id), which makes a retried request safe; ids of the caller's must be
        unique to what they name, as the service answers an id it knows from its store."""
        texts = responses if isinstance(responses, str) else list(responses)
        batch = uuid.uuid4().hex
        checked, params = judge_arguments(problems, texts, ids, reward, reward_params,
                                          default_ids=[f"{batch}-{i}" for i in range(len(texts))])
        field = "completion" if completions else "candidate"
        items = [{"id": i, "problem": p, field: r} for i, p, r in checked]
        shape = None if reward is None else {"shape": reward, "params": params}
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        grouped = bool(reward_params.get("zscore"))
        while True:
            size = self.max_items or max(1, len(items))
            if len(items) > size and grouped:
                raise ValueError(f"{len(items)} items exceed the {size} one request takes, and a zscore reward is "
                                 "normalised within the whole call: judge fewer items at once")
            try:
                out: list[dicebench.Judgement] = []
                for start in range(0, len(items), size):
                    out.extend(self._judge_part(items[start:start + size], shape, deadline))
                return out
            except _TooMany as e:  # the server takes fewer items a request: in parts of its limit
                if e.limit >= size:
                    raise RemoteError(f"the reward service at {self.url} refused {size} items: {e}") from None
                self.max_items = e.limit

    def _judge_part(self, items: list[dict[str, str]], reward: dict[str, Any] | None,
                    deadline: float | None) -> list[dicebench.Judgement]:
        if not items:
            return []
        body: dict[str, Any] = {"items": items, "timeout_s": self.wait}
        if reward is not None:
            body["reward"] = reward
        while True:
            asked = time.monotonic()
            status, answer = self._post(body, deadline)
            if status == 200:
                break
            # 202: judged in part within the wait. The same request again waits on the same items.
            if deadline is not None and time.monotonic() >= deadline:
                raise RemoteError(f"the reward service at {self.url} did not judge {len(items)} items within "
                                  f"{self.timeout} s (job {answer.get('job') if isinstance(answer, dict) else None})")
            if time.monotonic() - asked < 1.0:
                time.sleep(1.0)  # a server that did not hold the request: no faster than once a second
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list) or len(results) != len(items):
            got = f"{len(results)} results" if isinstance(results, list) else "no results list"
            raise RemoteError(f"the reward service at {self.url} answered {len(items)} items with {got}")
        judged = [dicebench.Judgement.from_json(r) for r in results]
        # In input order: by id where the service answered in another order.
        wanted = [item["id"] for item in items]
        if [j.id for j in judged] != wanted:
            by_id = {j.id: j for j in judged}
            if len(by_id) != len(judged) or set(by_id) != set(wanted) or len(set(wanted)) != len(wanted):
                raise RemoteError(f"the reward service at {self.url} answered ids other than those asked about")
            judged = [by_id[i] for i in wanted]
        return judged

    def _post(self, body: dict[str, Any], deadline: float | None) -> tuple[int, Any]:
        """The status (200 or 202) and JSON of POSTing `body`, retried as the class says."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        wait = self.backoff
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            pause: float | None = None
            try:
                # The server answers within timeout_s; the socket waits a minute longer.
                with urllib.request.urlopen(request, timeout=self.wait + 60.0) as response:
                    status, text = response.status, response.read()
            except urllib.error.HTTPError as e:
                message = self._message(e)
                if e.code == 413 and (limit := _LIMIT.search(message)):
                    raise _TooMany(message, int(limit.group(1))) from None
                if e.code not in RETRIED_STATUSES or last:
                    raise RemoteError(f"the reward service at {self.url} answered {e.code}: {message}") from None
                pause = _retry_after(e.headers.get("Retry-After") if e.headers else None)
            except (urllib.error.URLError, OSError) as e:  # refused, reset, timed out (TimeoutError is an OSError)
                if last:
                    reason = getattr(e, "reason", e)
                    raise RemoteError(f"the reward service at {self.url} could not be reached "
                                      f"({self.retries + 1} tries): {reason}") from None
            else:
                try:
                    return status, json.loads(text)
                except ValueError:
                    raise RemoteError(f"the reward service at {self.url} answered what is not JSON: "
                                      f"{text[:200]!r}") from None
            sleep = min(self.max_wait, wait if pause is None else pause)
            if deadline is not None and time.monotonic() + sleep > deadline:
                raise RemoteError(f"the reward service at {self.url} is busy or out of reach, and this call's "
                                  f"{self.timeout} s would run out waiting for it")
            time.sleep(sleep)
            wait *= 2
        raise AssertionError("unreachable")  # the last try returns or raises

    @staticmethod
    def _message(error: urllib.error.HTTPError) -> str:
        """The service's error message: {"error": ...} of a JSON body, else the body's start."""
        try:
            text = error.read().decode("utf-8", "replace")
        except OSError:
            return error.reason if isinstance(error.reason, str) else str(error)
        try:
            data = json.loads(text)
        except ValueError:
            return text[:500] or str(error.reason)
        if isinstance(data, dict) and "error" in data:
            detail = data["error"]
            return detail.get("message", json.dumps(detail)) if isinstance(detail, dict) else str(detail)
        return text[:500]

    def close(self) -> None:
        """Nothing to release (each request opens its own connection); for symmetry with Evaluator."""

    def __enter__(self) -> RemoteJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
