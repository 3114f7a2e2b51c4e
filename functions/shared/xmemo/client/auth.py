"""Where the client's bearer token comes from, and when it is renewed.

A provider keeps one access token and its expiry. `token()` renews it `leeway` seconds
before it expires; `refreshed(refused)` renews it once the server has refused it (401).
Providers that fetch over HTTP build the request and read the answer themselves but send
it through the caller's httpx client, so the sync and async clients share every rule."""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import json
import threading
import time
from typing import Any, Callable, Iterable

import httpx

from .errors import AuthenticationError

LEEWAY_S = 60.0
Obtained = tuple[str, float | None]  # (access token, expiry as a time.time() instant or None)


def jwt_expiry(token: str) -> float | None:
    """The `exp` of a JWT, read WITHOUT verifying it: only to schedule renewal (the server
    verifies). None for an opaque token."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError, binascii.Error):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, (int, float)) else None


class TokenProvider:
    """Caches one token; subclasses say how to obtain one (`_request`/`_accept` over HTTP,
    or `_obtain` without the client's HTTP). `clock` is injectable to model clock skew."""

    renewable = True

    def __init__(self, *, leeway: float = LEEWAY_S, clock: Callable[[], float] = time.time):
        self.leeway = leeway
        self.clock = clock
        self._token: str | None = None
        self._expires_at: float | None = None
        self._lock = threading.Lock()
        self._alock: asyncio.Lock | None = None

    # -- what subclasses provide ---------------------------------------------------------
    def _request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request | None:
        """The token request to send, or None when `_obtain` gets the token instead."""
        return None

    def _accept(self, response: httpx.Response) -> Obtained:
        raise NotImplementedError

    def _obtain(self, renew: bool) -> Obtained:
        """A token without the client's HTTP; `renew`: the server refused the last one."""
        raise NotImplementedError

    # -- the cache -----------------------------------------------------------------------
    def _fresh(self) -> bool:
        if self._token is None:
            return False
        return self._expires_at is None or self.clock() < self._expires_at - self.leeway

    def _keep(self, obtained: Obtained) -> str:
        token, expires_at = obtained
        self._token, self._expires_at = token, expires_at if expires_at is not None else jwt_expiry(token)
        return token

    def token(self, http: httpx.Client) -> str:
        with self._lock:
            if self._fresh():
                return self._token  # type: ignore[return-value]
            return self._keep(self._fetch(http, False))

    def refreshed(self, http: httpx.Client, refused: str) -> str | None:
        """A new token after the server refused `refused`, or None when none can be had."""
        if not self.renewable:
            return None
        with self._lock:
            if self._token != refused:  # another caller renewed it meanwhile
                return self._token
            return self._keep(self._fetch(http, True))

    def _fetch(self, http: httpx.Client, renew: bool) -> Obtained:
        request = self._request(http)
        return self._obtain(renew) if request is None else self._accept(http.send(request))

    # -- the same, for AsyncXMemo --------------------------------------------------------
    async def atoken(self, http: httpx.AsyncClient) -> str:
        async with self._async_lock():
            if self._fresh():
                return self._token  # type: ignore[return-value]
            return self._keep(await self._afetch(http, False))

    async def arefreshed(self, http: httpx.AsyncClient, refused: str) -> str | None:
        if not self.renewable:
            return None
        async with self._async_lock():
            if self._token != refused:
                return self._token
            return self._keep(await self._afetch(http, True))

    async def _afetch(self, http: httpx.AsyncClient, renew: bool) -> Obtained:
        request = self._request(http)
        if request is None:
            return await asyncio.to_thread(self._obtain, renew)
        return self._accept(await http.send(request))

    def _async_lock(self) -> asyncio.Lock:
        if self._alock is None:
            self._alock = asyncio.Lock()
        return self._alock


class StaticToken(TokenProvider):
    """A token handed in as is: never renewed (a 401 is raised as UnauthorizedError)."""

    renewable = False

    def __init__(self, token: str):
        super().__init__()
        if not token or not token.strip():
            raise AuthenticationError("empty token")
        self._keep((token.strip(), None))

    def _fresh(self) -> bool:
        return True


class TokenFunction(TokenProvider):
    """A token from your own code (a secrets manager, a sidecar): `fetch()` returns the
    token, or `(token, expires_at)`; it is called again near expiry and after a 401."""

    def __init__(self, fetch: Callable[[], str | Obtained], *, leeway: float = LEEWAY_S, clock: Callable[[], float] = time.time):
        super().__init__(leeway=leeway, clock=clock)
        self.fetch = fetch

    def _obtain(self, renew: bool) -> Obtained:
        got = self.fetch()
        return got if isinstance(got, tuple) else (got, None)


class ClientCredentials(TokenProvider):
    """OAuth client-credentials grant (RFC 6749 §4.4) at Cognito's `/oauth2/token`, or the
    local gateway's. Scopes may be short (`memory:read`); they are qualified with the
    resource server id as Cognito requires."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        token_url: str,
        *,
        scopes: Iterable[str] = (),
        resource_server: str = "xmemo",
        leeway: float = LEEWAY_S,
        clock: Callable[[], float] = time.time,
    ):
        super().__init__(leeway=leeway, clock=clock)
        if not client_id or not client_secret:
            raise AuthenticationError("client credentials need a client id and a secret")
        self.client_id = client_id
        self._secret = client_secret
        self.token_url = token_url
        self.scopes = [s if "/" in s else f"{resource_server}/{s}" for s in scopes]

    def __repr__(self) -> str:  # never the secret
        return f"ClientCredentials(client_id={self.client_id!r}, token_url={self.token_url!r}, scopes={self.scopes!r})"

    def _request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        form = {"grant_type": "client_credentials"}
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        basic = base64.b64encode(f"{self.client_id}:{self._secret}".encode()).decode()
        return http.build_request("POST", self.token_url, data=form, headers={"Authorization": f"Basic {basic}"})

    def _accept(self, response: httpx.Response) -> Obtained:
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        if response.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            reason = body.get("error") if isinstance(body, dict) else None
            raise AuthenticationError(f"the token endpoint refused the client ({response.status_code} {reason or 'no token'})")
        expires_in = body.get("expires_in")
        expires_at = self.clock() + float(expires_in) if isinstance(expires_in, (int, float)) else None
        return body["access_token"], expires_at


class StoredLogin(TokenProvider):
    """The login `xmemo login` saved for this deployment (a refresh token in the user's
    config dir): renewed through `xmemo.credentials`, which saves a rotated refresh token."""

    def __init__(self, url: str | None = None, *, leeway: float = LEEWAY_S, clock: Callable[[], float] = time.time):
        super().__init__(leeway=leeway, clock=clock)
        from .. import credentials  # standard library only; needed by this provider alone

        self._credentials = credentials
        login = credentials.load(url)
        if login is None:
            raise AuthenticationError(f"no stored login for {url or 'this machine'}; run `xmemo login --url <url>`")
        self._login = login

    def _obtain(self, renew: bool) -> Obtained:
        login = dataclasses.replace(self._login, access_token=None) if renew else self._login
        try:
            token, self._login = self._credentials.fresh_access_token(login, leeway=self.leeway)
        except self._credentials.LoginError as exc:
            raise AuthenticationError(str(exc)) from None
        return token, self._login.expires_at
