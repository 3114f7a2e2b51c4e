"""`XMemo` and `AsyncXMemo`: one method per tool over the REST API, returning the result
models the service itself returns (`xmemo.results`), raising SPEC §6 errors as typed
exceptions (`xmemo.client.errors`). The two differ only in how they do I/O: the rules
(token renewal, retries, deadline) are `transport.Plan`'s, the requests `calls`'."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, AsyncIterator, Callable, Iterable, Iterator, TypeVar, Unpack

import httpx
from pydantic import BaseModel

from ..models import Memory
from ..results import ContextResult, ForgetResult, ListResult, MemoryResult, RecallResult, RememberResult, SearchResult
from . import calls
from .auth import ClientCredentials, StaticToken, StoredLogin, TokenFunction, TokenProvider
from .calls import ForgetFilters, ReadFilters, RememberOptions, SearchFilters
from .errors import AuthenticationError
from .transport import Call, Plan, Retry, Send, Sleep, Token

DEFAULT_URL = "http://127.0.0.1:8787"  # `make run`
DEFAULT_TIMEOUT_S = 10.0
R = TypeVar("R", bound=BaseModel)


def resolve_auth(
    url: str,
    *,
    auth: TokenProvider | Callable[[], Any] | None = None,
    token: str | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    token_url: str | None = None,
    scopes: Iterable[str] = (),
    resource_server: str = "xmemo",
    env: dict[str, str] | os._Environ = os.environ,
) -> TokenProvider:
    """The first of: `auth` (a provider, or a function returning tokens), `token`, client
    credentials (arguments, then `XMEMO_TOKEN`, then `XMEMO_CLIENT_ID` and
    `XMEMO_CLIENT_SECRET`), and the login `xmemo login` stored for `url`."""
    if isinstance(auth, TokenProvider):
        return auth
    if auth is not None:
        return TokenFunction(auth)
    if token:
        return StaticToken(token)
    if client_id or client_secret:
        return ClientCredentials(client_id or "", client_secret or "", token_url or f"{url}/oauth2/token", scopes=scopes, resource_server=resource_server)
    if env.get("XMEMO_TOKEN"):
        return StaticToken(env["XMEMO_TOKEN"])
    if env.get("XMEMO_CLIENT_ID"):
        return ClientCredentials(
            env["XMEMO_CLIENT_ID"], env.get("XMEMO_CLIENT_SECRET", ""), token_url or env.get("XMEMO_TOKEN_URL") or f"{url}/oauth2/token",
            scopes=scopes, resource_server=resource_server,
        )
    return StoredLogin(url)  # AuthenticationError, saying to run `xmemo login`, when there is none


class _Base:
    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        token_url: str | None = None,
        scopes: Iterable[str] = (),
        resource_server: str = "xmemo",
        auth: TokenProvider | Callable[[], Any] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        retry: Retry = Retry(),
    ):
        self.url = (url or os.environ.get("XMEMO_URL") or DEFAULT_URL).rstrip("/")
        self.auth = resolve_auth(
            self.url, auth=auth, token=token, client_id=client_id, client_secret=client_secret,
            token_url=token_url, scopes=scopes, resource_server=resource_server,
        )
        self.timeout = timeout
        self.retry = retry
        self.last_plan: Plan | None = None  # the last call's plan: how many attempts it took

    def _plan(self, call: Call) -> Plan:
        self.last_plan = Plan(call, self.retry, self.timeout)
        return self.last_plan

    @staticmethod
    def _request_args(step: Send) -> dict[str, Any]:
        call = step.call
        return {
            "method": call.method,
            "url": call.path,
            "json": call.json,
            "params": call.params,
            "headers": {"Authorization": f"Bearer {step.token}"},
            "timeout": step.timeout,
        }


class XMemo(_Base):
    """The blocking client. Thread-safe; close it (or use `with`) to release connections.

    `url` defaults to `$XMEMO_URL`, then `make run`'s address. Authentication: see
    `resolve_auth`. `timeout` bounds each attempt, `retry.deadline` the whole call."""

    def __init__(self, url: str | None = None, *, transport: httpx.BaseTransport | None = None, **kwargs: Any):
        super().__init__(url, **kwargs)
        self._http = httpx.Client(base_url=self.url, timeout=self.timeout, transport=transport, headers={"User-Agent": "xmemo-client"})

    def __enter__(self) -> "XMemo":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _run(self, call: Call, model: type[R]) -> R:
        steps = self._plan(call).steps()
        value: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                step = steps.throw(thrown) if thrown is not None else steps.send(value)
            except StopIteration as done:
                return model.model_validate(done.value)
            value, thrown = None, None
            if isinstance(step, Token):
                try:
                    value = self.auth.token(self._http) if step.refused is None else self.auth.refreshed(self._http, step.refused)
                except httpx.TransportError as exc:
                    raise AuthenticationError(f"the token endpoint did not answer ({type(exc).__name__})") from exc
            elif isinstance(step, Send):
                try:
                    value = self._http.request(**self._request_args(step))
                except httpx.TransportError as exc:
                    thrown = exc
            elif isinstance(step, Sleep):
                time.sleep(step.seconds)

    # -- the tools -------------------------------------------------------------------------
    def remember(self, content: str, **options: Unpack[RememberOptions]) -> RememberResult:
        """Store one memory (`RememberOptions`: type, location, bucket, team, project, tags,
        temporary, ttl_seconds, title, supersedes). Retried safely: a write that landed
        before its answer was lost is found again as a duplicate, never stored twice."""
        return self._run(calls.remember(content, RememberOptions(**options)), RememberResult)

    def recall(self, query: str, *, limit: int | None = None, **filters: Unpack[ReadFilters]) -> RecallResult:
        """Best-effort, typo-tolerant recall (`ReadFilters`)."""
        return self._run(calls.recall(query, limit, ReadFilters(**filters)), RecallResult)

    def search(self, query: str, *, limit: int | None = None, **filters: Unpack[SearchFilters]) -> SearchResult:
        """Strict search: every term must match (`SearchFilters`)."""
        return self._run(calls.search(query, limit, SearchFilters(**filters)), SearchResult)

    def context(self, query: str, *, max_items: int | None = None, max_tokens: int | None = None, **filters: Unpack[ReadFilters]) -> ContextResult:
        """A token-budgeted context pack (`ReadFilters`)."""
        return self._run(calls.context(query, max_items, max_tokens, ReadFilters(**filters)), ContextResult)

    def get(self, reference: str) -> MemoryResult:
        return self._run(calls.get(reference), MemoryResult)

    def list_page(self, *, limit: int | None = None, cursor: str | None = None, **filters: Unpack[ReadFilters]) -> ListResult:
        """One page of visible memories, newest first."""
        return self._run(calls.list_page(limit, cursor, ReadFilters(**filters)), ListResult)

    def list(self, *, page_size: int | None = None, **filters: Unpack[ReadFilters]) -> Iterator[Memory]:
        """Every visible memory matching `filters`, newest first, page after page."""
        cursor: str | None = None
        while True:
            page = self.list_page(limit=page_size, cursor=cursor, **filters)
            yield from page.memories
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def forget(self, reference: str | None = None, **filters: Unpack[ForgetFilters]) -> ForgetResult:
        """Delete one memory by reference, or every visible memory matching `filters`."""
        return self._run(calls.forget(reference, ForgetFilters(**filters)), ForgetResult)


class AsyncXMemo(_Base):
    """The asyncio client: the same methods as `XMemo`, awaited; `list` is an async iterator."""

    def __init__(self, url: str | None = None, *, transport: httpx.AsyncBaseTransport | None = None, **kwargs: Any):
        super().__init__(url, **kwargs)
        self._http = httpx.AsyncClient(base_url=self.url, timeout=self.timeout, transport=transport, headers={"User-Agent": "xmemo-client"})

    async def __aenter__(self) -> "AsyncXMemo":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _run(self, call: Call, model: type[R]) -> R:
        steps = self._plan(call).steps()
        value: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                step = steps.throw(thrown) if thrown is not None else steps.send(value)
            except StopIteration as done:
                return model.model_validate(done.value)
            value, thrown = None, None
            if isinstance(step, Token):
                try:
                    value = await (self.auth.atoken(self._http) if step.refused is None else self.auth.arefreshed(self._http, step.refused))
                except httpx.TransportError as exc:
                    raise AuthenticationError(f"the token endpoint did not answer ({type(exc).__name__})") from exc
            elif isinstance(step, Send):
                try:
                    value = await self._http.request(**self._request_args(step))
                except httpx.TransportError as exc:
                    thrown = exc
            elif isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)

    async def remember(self, content: str, **options: Unpack[RememberOptions]) -> RememberResult:
        return await self._run(calls.remember(content, RememberOptions(**options)), RememberResult)

    async def recall(self, query: str, *, limit: int | None = None, **filters: Unpack[ReadFilters]) -> RecallResult:
        return await self._run(calls.recall(query, limit, ReadFilters(**filters)), RecallResult)

    async def search(self, query: str, *, limit: int | None = None, **filters: Unpack[SearchFilters]) -> SearchResult:
        return await self._run(calls.search(query, limit, SearchFilters(**filters)), SearchResult)

    async def context(self, query: str, *, max_items: int | None = None, max_tokens: int | None = None, **filters: Unpack[ReadFilters]) -> ContextResult:
        return await self._run(calls.context(query, max_items, max_tokens, ReadFilters(**filters)), ContextResult)

    async def get(self, reference: str) -> MemoryResult:
        return await self._run(calls.get(reference), MemoryResult)

    async def list_page(self, *, limit: int | None = None, cursor: str | None = None, **filters: Unpack[ReadFilters]) -> ListResult:
        return await self._run(calls.list_page(limit, cursor, ReadFilters(**filters)), ListResult)

    async def list(self, *, page_size: int | None = None, **filters: Unpack[ReadFilters]) -> AsyncIterator[Memory]:
        cursor: str | None = None
        while True:
            page = await self.list_page(limit=page_size, cursor=cursor, **filters)
            for memory in page.memories:
                yield memory
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def forget(self, reference: str | None = None, **filters: Unpack[ForgetFilters]) -> ForgetResult:
        return await self._run(calls.forget(reference, ForgetFilters(**filters)), ForgetResult)
