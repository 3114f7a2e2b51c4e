"""The opensearch-py client, built once per process, and the one place that runs a
request with bounded time: per-attempt timeouts, a few retries with jittered backoff,
all inside one deadline. Store failures leave here as `StoreUnavailable` (503)."""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, TypeVar
from urllib.parse import urlparse

from ...config import OpenSearchSettings
from ...errors import StoreUnavailable

log = logging.getLogger("xmemo.store.opensearch")
T = TypeVar("T")

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})


def make_client(settings: OpenSearchSettings, credentials: Any = None) -> Any:
    """An `OpenSearch` client for the configured endpoint and auth. Its own transport
    retries are off (`max_retries=0`): `Caller` owns retries so they respect the deadline.
    urllib3 keeps connections alive, so warm Lambda invocations reuse them."""
    from opensearchpy import OpenSearch, Urllib3HttpConnection

    url = urlparse(settings.opensearch_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError("XMEMO_OPENSEARCH_URL must be an http(s) URL")
    auth: Any = None
    if settings.opensearch_auth == "basic":
        password = settings.opensearch_password.get_secret_value() if settings.opensearch_password else ""
        auth = (settings.opensearch_username or "", password)
    elif settings.opensearch_auth == "sigv4":
        auth = sigv4_auth(settings, credentials)
    return OpenSearch(
        hosts=[{"host": url.hostname, "port": url.port or (443 if url.scheme == "https" else 80), "scheme": url.scheme}],
        http_auth=auth,
        use_ssl=url.scheme == "https",
        verify_certs=settings.opensearch_verify_certs,
        ssl_show_warn=False,
        connection_class=Urllib3HttpConnection,
        timeout=settings.opensearch_timeout_s,
        max_retries=0,
        retry_on_timeout=False,
        pool_maxsize=8,
        http_compress=settings.opensearch_auth == "sigv4",  # AWS bills and limits request bytes
    )


def sigv4_auth(settings: OpenSearchSettings, credentials: Any = None) -> Any:
    """SigV4 signing (the urllib3 flavour of `AWSV4SignerAuth`) with the Lambda role's
    refreshable credentials; service `es` (managed domain) or `aoss` (Serverless)."""
    from opensearchpy import Urllib3AWSV4SignerAuth

    if credentials is None or settings.opensearch_region is None:
        import boto3

        session = boto3.Session()
        credentials = credentials or session.get_credentials()
        region = settings.opensearch_region or session.region_name
    else:
        region = settings.opensearch_region
    if credentials is None:
        raise ValueError("no AWS credentials found for SigV4 signing")
    if not region:
        raise ValueError("set XMEMO_OPENSEARCH_REGION (or AWS_REGION) for SigV4 signing")
    return Urllib3AWSV4SignerAuth(credentials, region, settings.opensearch_service)


@dataclass
class Caller:
    """Runs one store operation's requests within `deadline_s`. Each attempt gets
    `min(timeout_s, time left)`; connection errors, timeouts, 429 and 502–504 are retried
    at most `retries` times. Only idempotent requests are passed here (creates use
    deterministic ids, deletes and updates converge), so a retry never duplicates."""

    timeout_s: float
    retries: int
    deadline_s: float
    backoff_s: float = 0.1
    sleep: Callable[[float], None] = time.sleep

    @classmethod
    def from_settings(cls, settings: OpenSearchSettings) -> "Caller":
        return cls(settings.opensearch_timeout_s, settings.opensearch_retries, settings.opensearch_deadline_s)

    def deadline(self) -> float:
        return time.monotonic() + self.deadline_s

    def __call__(self, op: str, fn: Callable[[float], T], deadline: float | None = None) -> T:
        """`fn(timeout)` performs one attempt; `deadline` (monotonic) may be shared by
        several requests of one operation so that together they stay bounded."""
        from opensearchpy.exceptions import ConnectionError as OSConnectionError
        from opensearchpy.exceptions import TransportError

        end = deadline if deadline is not None else self.deadline()
        attempt = 0
        while True:
            left = end - time.monotonic()
            if left <= 0.01:
                raise StoreUnavailable(f"the memory store did not answer within the deadline ({op})")
            try:
                return fn(min(self.timeout_s, left))
            except OSConnectionError as exc:  # refused, reset, timed out (ConnectionTimeout)
                reason = type(exc).__name__
            except TransportError as exc:
                if not isinstance(exc.status_code, int) or exc.status_code not in RETRYABLE_STATUS:
                    raise
                reason = f"HTTP {exc.status_code}"
            attempt += 1
            log.warning("opensearch %s failed (%s), attempt %d", op, reason, attempt)
            if attempt > self.retries:
                raise StoreUnavailable(f"the memory store is unavailable ({op}: {reason})") from None
            pause = self.backoff_s * (2 ** (attempt - 1)) * (0.5 + random.random())
            pause = min(pause, max(0.0, end - time.monotonic() - 0.05))
            if pause > 0:
                self.sleep(pause)

