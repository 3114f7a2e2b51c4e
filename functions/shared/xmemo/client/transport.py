"""One call's life: token, attempt, retry, refresh. Written once as a generator of steps
(`Token`, `Send`, `Sleep`) that the sync and async clients each drive with their own I/O,
so both follow exactly the same rules:

- a 401 renews the token once and tries again; a second 401 is raised;
- 429 and 503 are retried with jittered exponential backoff, waiting at least what
  `Retry-After` asks, until the call's total `deadline`; every other 4xx is raised at once;
- a request that never reached the server (connection refused, connect timeout) is
  retried likewise; one whose answer was lost (read timeout, connection cut) only when the
  call is idempotent: every read, and `remember` (idempotent by content, SPEC §3), never
  `forget` by reference (a retry of a delete that landed would answer 404)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Generator, Union

import httpx

from .errors import TransportError, UnauthorizedError, error_from

RETRY_STATUSES = frozenset({429, 503})
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class Retry:
    """`deadline`: seconds one call may take in all, attempts and waits included (also the
    bound of each attempt's own timeout). Backoff doubles from `backoff` up to `max_backoff`
    with equal jitter; a `Retry-After` is honoured, with up to 20% more so callers that were
    told the same second do not return together. `Retry(deadline=0)` never retries."""

    deadline: float = 30.0
    backoff: float = 0.25
    max_backoff: float = 8.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after * (1 + 0.2 * random.random())
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        return ceiling / 2 + random.random() * ceiling / 2


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    json: Any = None
    params: Any = None
    idempotent: bool = True


@dataclass(frozen=True)
class Token:
    refused: str | None = None  # a token the server refused: renew it


@dataclass(frozen=True)
class Send:
    call: Call
    token: str
    timeout: float


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step = Union[Token, Send, Sleep]


def retry_after_of(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (delta-seconds or an HTTP date), or None."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def body_of(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


@dataclass
class Plan:
    """The steps of one call; `tries` and `waits` record what it took."""

    call: Call
    retry: Retry
    timeout: float
    clock: Any = time.monotonic
    tries: int = field(default=0, init=False)
    waits: list[float] = field(default_factory=list, init=False)

    def steps(self) -> Generator[Step, Any, Any]:
        started = self.clock()
        renewed = False
        token = yield Token()
        while True:
            left = self.retry.deadline - (self.clock() - started)
            self.tries += 1
            failure: Exception
            try:
                response: httpx.Response = yield Send(self.call, token, max(0.001, min(self.timeout, left)) if left > 0 else self.timeout)
            except httpx.TransportError as exc:
                if not isinstance(exc, _NOT_SENT) and not self.call.idempotent:
                    raise TransportError(f"{type(exc).__name__} on {self.call.method} {self.call.path}; not retried (not idempotent)") from exc
                failure, wait_hint = TransportError(f"{type(exc).__name__} on {self.call.method} {self.call.path}"), None
                failure.__cause__ = exc
            else:
                if response.is_success:
                    return body_of(response)
                wait_hint = retry_after_of(response)
                failure = error_from(response.status_code, body_of(response), wait_hint)
                if isinstance(failure, UnauthorizedError) and not renewed:
                    renewed = True
                    fresh = yield Token(refused=token)
                    if fresh is not None:
                        token = fresh
                        continue
                if response.status_code not in RETRY_STATUSES:
                    raise failure
            wait = self.retry.delay(self.tries - 1, wait_hint)
            if self.clock() - started + wait > self.retry.deadline:
                raise failure
            self.waits.append(wait)
            yield Sleep(wait)


