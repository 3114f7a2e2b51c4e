"""Where the client's token comes from, and its renewal, against the local gateway's real
token endpoint (`POST /oauth2/token`, client-credentials grant) and authorizer."""

from __future__ import annotations

import asyncio
import time

import pytest

from xmemo.client import AsyncXMemo, AuthenticationError, ClientCredentials, InsufficientScopeError, TokenFunction, UnauthorizedError, XMemo
from xmemo.client.auth import jwt_expiry

from .conftest import app_client

pytestmark = pytest.mark.e2e


def _token_requests(proxy) -> int:
    return sum(1 for method, path, _ in proxy.seen if method == "POST" and path == "/oauth2/token")


def test_client_credentials_are_exchanged_and_renewed_before_expiry(gateway, proxy):
    client_id, secret = app_client(gateway, "memory:read", "memory:write")
    now = [time.time()]
    creds = ClientCredentials(client_id, secret, f"{proxy.url}/oauth2/token", scopes=["memory:read", "memory:write"], clock=lambda: now[0])
    with XMemo(gateway.url, auth=creds) as m:
        stored = m.remember("written by a machine client")
        assert stored.memory.owner == client_id and stored.memory.source.client_id == client_id
        m.recall("machine client")
        assert _token_requests(proxy) == 1  # cached while fresh
        first = creds._token
        now[0] += 3600 - 30  # within the 60 s leeway of its expiry
        m.recall("machine client")
        assert _token_requests(proxy) == 2 and creds._token != first


def test_scopes_ask_for_less_than_the_client_may_have(gateway):
    client_id, secret = app_client(gateway, "memory:read", "memory:write")
    with XMemo(gateway.url, client_id=client_id, client_secret=secret, scopes=["memory:read"]) as m:
        m.recall("anything")
        with pytest.raises(InsufficientScopeError):
            m.remember("a read-only token cannot write")


def test_a_wrong_secret_is_an_authentication_error(gateway):
    client_id, _ = app_client(gateway)
    with XMemo(gateway.url, client_id=client_id, client_secret="not-the-secret") as m:
        with pytest.raises(AuthenticationError) as e:
            m.recall("anything")
    assert "invalid_client" in str(e.value) and "not-the-secret" not in str(e.value)
    assert "not-the-secret" not in repr(m.auth)


def test_an_expired_token_refused_by_the_server_is_renewed_once(gateway, proxy, user):
    """The client's clock runs two hours behind, so it takes an expired token for a fresh
    one: the server refuses it (401), the client renews once and the call succeeds."""
    handed = [gateway.token(user, ttl=3600, now=int(time.time()) - 3700), gateway.token(user)]
    assert jwt_expiry(handed[0]) < time.time()
    calls = []

    def fetch():
        calls.append(1)
        return handed[len(calls) - 1]

    skewed = TokenFunction(fetch, clock=lambda: time.time() - 7200)
    with XMemo(proxy.url, auth=skewed) as m:
        m.recall("anything")
        assert m.last_plan.tries == 2 and len(calls) == 2
    assert sum(1 for _, path, _ in proxy.seen if path == "/v1/recall") == 2  # refused, then answered


def test_a_second_401_is_raised_not_looped(gateway, proxy, user):
    expired = gateway.token(user, ttl=60, now=1_700_000_000)
    calls = []

    def fetch():
        calls.append(1)
        return expired

    with XMemo(proxy.url, auth=TokenFunction(fetch, clock=lambda: 1_700_000_000.0)) as m:
        with pytest.raises(UnauthorizedError):
            m.recall("anything")
        assert m.last_plan.tries == 2 and len(calls) == 2
    assert sum(1 for _, path, _ in proxy.seen if path == "/v1/recall") == 2


def test_revoked_client_is_refused_after_one_renewal(gateway, proxy):
    client_id, secret = app_client(gateway)
    creds = ClientCredentials(client_id, secret, f"{proxy.url}/oauth2/token")
    with XMemo(gateway.url, auth=creds) as m:
        m.recall("anything")
        assert gateway.cli("client", "delete", client_id).returncode == 0
        with pytest.raises(AuthenticationError):  # 401, then the token endpoint refuses the client
            m.recall("anything")
    assert _token_requests(proxy) == 2


def test_async_client_renews_the_same_way(gateway, user):
    handed = [gateway.token(user, ttl=3600, now=int(time.time()) - 3700), gateway.token(user)]

    async def run():
        fetched = []

        def fetch():
            fetched.append(1)
            return handed[len(fetched) - 1]

        async with AsyncXMemo(gateway.url, auth=TokenFunction(fetch, clock=lambda: time.time() - 7200)) as m:
            await m.recall("anything")
            assert m.last_plan.tries == 2 and len(fetched) == 2

    asyncio.run(run())


def test_async_client_credentials(gateway):
    client_id, secret = app_client(gateway)

    async def run():
        async with AsyncXMemo(gateway.url, client_id=client_id, client_secret=secret) as m:
            return (await m.remember("written by an async machine client")).memory.owner

    assert asyncio.run(run()) == client_id


def test_environment_supplies_url_and_credentials(gateway, monkeypatch):
    client_id, secret = app_client(gateway)
    monkeypatch.setenv("XMEMO_URL", gateway.url)
    monkeypatch.delenv("XMEMO_TOKEN", raising=False)
    monkeypatch.setenv("XMEMO_CLIENT_ID", client_id)
    monkeypatch.setenv("XMEMO_CLIENT_SECRET", secret)
    with XMemo() as m:
        assert isinstance(m.auth, ClientCredentials)
        assert m.remember("configured from the environment").memory.owner == client_id
