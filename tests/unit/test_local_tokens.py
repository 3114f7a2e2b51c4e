"""Local tokens: Cognito access-token shape, and every way verification must fail."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from xmemo.config import Settings
from xmemo.errors import Unauthorized
from xmemo.local.clients import CLI_CLIENT_ID, ClientRegistry
from xmemo.local.events import claims_as_strings
from xmemo.local.keys import SigningKey
from xmemo.local import tokens as tokens_module
from xmemo.local.tokens import VerifiedTokens, issue_token, verify_token
from xmemo.auth import principal_from_claims


@pytest.fixture
def env(tmp_path):
    settings = Settings(data_dir=tmp_path, embedder="none", port=9999)
    return settings, SigningKey(tmp_path), ClientRegistry(tmp_path)


def test_user_token_shape_and_principal(env):
    settings, key, clients = env
    token = issue_token(settings, key, scopes=["memory:read", "memory:write"], sub="alice", teams=["acme", "ops"])
    claims = verify_token(token, settings, key, clients)
    assert claims["token_use"] == "access" and claims["client_id"] == CLI_CLIENT_ID
    assert claims["scope"] == "xmemo/memory:read xmemo/memory:write"
    assert claims["iss"] == "http://127.0.0.1:9999" and claims["cognito:groups"] == ["team:acme", "team:ops"]
    assert {"exp", "iat", "jti", "auth_time", "sub", "username"} <= set(claims)
    assert claims["aud"] == "http://127.0.0.1:9999"  # no resource named: the deployment itself
    for resource in ("http://127.0.0.1:9999/mcp", "http://localhost:9999/mcp/full"):
        assert verify_token(issue_token(settings, key, scopes=["memory:read"], sub="a", audience=resource), settings, key, clients)["aud"] == resource
    principal = principal_from_claims(claims_as_strings(claims), "xmemo")
    assert principal.owner == "alice" and principal.teams == {"acme", "ops"}
    assert principal.has("memory:write") and not principal.has("memory:temporary")


def test_key_persists_and_is_private(env, tmp_path):
    settings, key, clients = env
    token = issue_token(settings, key, scopes=["memory:read"], sub="a")
    again = SigningKey(tmp_path)  # a restarted gateway
    assert verify_token(token, settings, again, clients)["sub"] == "a"
    assert (key.path.stat().st_mode & 0o777) == 0o600
    assert key.jwks()["keys"][0]["kid"] == again.kid


VERIFIERS = {"direct": verify_token, "cached": lambda *a: VerifiedTokens().verify(*a)}


@pytest.mark.parametrize("verifier", sorted(VERIFIERS))
@pytest.mark.parametrize("case", ["expired", "wrong_issuer", "bad_signature", "foreign_key", "id_token", "unknown_client", "garbage", "hs256",
                                  "foreign_audience", "another_port", "no_audience", "mixed_audience"])
def test_verification_failures(env, case, verifier):
    settings, key, clients = env
    now = int(time.time())
    if case == "expired":
        token = issue_token(settings, key, scopes=["memory:read"], sub="a", ttl=60, now=now - 120)
    elif case == "wrong_issuer":
        token = issue_token(settings.model_copy(update={"issuer": "https://evil.example"}), key, scopes=["memory:read"], sub="a")
    elif case == "bad_signature":
        good = issue_token(settings, key, scopes=["memory:read"], sub="a")
        head, payload, sig = good.split(".")
        token = f"{head}.{payload}.{sig[:-4]}AAAA"
    elif case == "foreign_key":
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        claims = jwt.decode(issue_token(settings, key, scopes=["memory:read"], sub="a"), options={"verify_signature": False})
        token = jwt.encode(claims, other, algorithm="RS256", headers={"kid": key.kid})
    elif case == "id_token":
        claims = jwt.decode(issue_token(settings, key, scopes=["memory:read"], sub="a"), options={"verify_signature": False})
        token = jwt.encode({**claims, "token_use": "id"}, key.private_key, algorithm="RS256", headers={"kid": key.kid})
    elif case == "unknown_client":
        token = issue_token(settings, key, scopes=["memory:read"], client_id="not-registered")
    elif case == "foreign_audience":  # RFC 8707: a token granted for another resource
        token = issue_token(settings, key, scopes=["memory:read"], sub="a", audience="https://other.example/mcp")
    elif case == "another_port":  # another local gateway's MCP endpoint
        token = issue_token(settings, key, scopes=["memory:read"], sub="a", audience="http://127.0.0.1:9998/mcp")
    elif case in ("no_audience", "mixed_audience"):
        claims = jwt.decode(issue_token(settings, key, scopes=["memory:read"], sub="a"), options={"verify_signature": False})
        claims = {k: v for k, v in claims.items() if k != "aud"} if case == "no_audience" else \
            {**claims, "aud": ["http://127.0.0.1:9999/mcp", "https://other.example/mcp"]}
        token = jwt.encode(claims, key.private_key, algorithm="RS256", headers={"kid": key.kid})
    elif case == "garbage":
        token = "not.a.jwt"
    else:
        token = jwt.encode({"sub": "a", "iss": "http://127.0.0.1:9999"}, "secret", algorithm="HS256", headers={"kid": key.kid})
    with pytest.raises(Unauthorized):
        VERIFIERS[verifier](token, settings, key, clients)


def test_client_secrets_are_hashed_and_checked(env):
    settings, key, clients = env
    client, secret = clients.create("agent", ["xmemo/memory:read"], ["acme"])
    stored = clients.path.read_text()
    assert secret not in stored and client.secret_hash in stored
    assert clients.authenticate(client.client_id, secret) is not None
    assert clients.authenticate(client.client_id, secret + "x") is None
    token = issue_token(settings, key, scopes=client.scopes, client_id=client.client_id, teams=client.teams)
    claims = verify_token(token, settings, key, clients)
    assert claims["sub"] == client.client_id and claims["custom:teams"] == "acme"
    principal = principal_from_claims(claims_as_strings(claims), "xmemo")
    assert principal.owner == client.client_id and principal.teams == {"acme"}
    assert clients.delete(client.client_id)
    with pytest.raises(Unauthorized):
        verify_token(token, settings, key, clients)  # a deleted client's tokens stop working


def test_the_authorizer_cache_serves_only_what_it_verified(env):
    settings, key, clients = env
    cache = VerifiedTokens(size=2)
    token = issue_token(settings, key, scopes=["memory:read"], sub="alice")
    first = cache.verify(token, settings, key, clients)
    first["sub"] = "mallory"  # a caller changing its copy changes nothing cached
    assert cache.verify(token, settings, key, clients)["sub"] == "alice"
    head, payload, sig = token.split(".")
    with pytest.raises(Unauthorized):  # a different string is verified afresh, never matched loosely
        cache.verify(f"{head}.{payload}.{sig[:-4]}AAAA", settings, key, clients)
    for sub in ("b", "c"):
        cache.verify(issue_token(settings, key, scopes=["memory:read"], sub=sub), settings, key, clients)
    assert len(cache._entries) == 2  # bounded
    assert token not in repr(cache._entries)  # keyed by digest: the token itself is not kept


def test_a_cached_token_still_expires_and_dies_with_its_client(env, monkeypatch):
    settings, key, clients = env
    cache = VerifiedTokens()
    now = int(time.time())
    token = issue_token(settings, key, scopes=["memory:read"], sub="a", ttl=60, now=now)
    assert cache.verify(token, settings, key, clients)["sub"] == "a"
    monkeypatch.setattr(tokens_module.time, "time", lambda: now + 61)
    with pytest.raises(Unauthorized, match="expired"):
        cache.verify(token, settings, key, clients)
    monkeypatch.undo()
    client, _ = clients.create("agent", ["xmemo/memory:read"])
    token = issue_token(settings, key, scopes=client.scopes, client_id=client.client_id)
    assert cache.verify(token, settings, key, clients)["sub"] == client.client_id
    clients.delete(client.client_id)
    with pytest.raises(Unauthorized, match="unknown app client"):
        cache.verify(token, settings, key, clients)
