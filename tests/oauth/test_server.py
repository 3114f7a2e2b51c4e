"""The authorization server's rules, on both state stores, with the local gateway as the
upstream identity provider (real signed tokens, real scrypt-checked users)."""

from __future__ import annotations

import secrets
import sqlite3
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from xmemo.oauth.errors import OAuthError
from xmemo.oauth.server import s256

from .conftest import ALL, ISSUER, RESOURCE

REDIRECT = "http://127.0.0.1:33333/callback"
READ, WRITE, TEMP = ALL


def register(server, **body):
    return server.register({"redirect_uris": [REDIRECT], "client_name": "test", **body}, source="10.0.0.1")["client_id"]


def authorize(server, client_id, verifier, **over):
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st-1",
              "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": RESOURCE,
              "scope": f"{READ} {WRITE}", **over}
    return server.begin({k: v for k, v in params.items() if v is not None})


def login(server, client_id, verifier, **over) -> str:
    """The code of a completed login (alice), from the redirect."""
    txn, _request, login_url = authorize(server, client_id, verifier, **over)
    assert login_url is None  # the local upstream shows its own form
    location = server.complete(txn, {"user": "alice"})
    query = parse_qs(urlsplit(location).query)
    assert location.startswith(REDIRECT + "?")
    assert query["state"] == ["st-1"] and query["iss"] == [ISSUER]  # RFC 9207
    return query["code"][0]


def exchange(server, client_id, code, verifier, **over):
    form = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "redirect_uri": REDIRECT,
            "code_verifier": verifier, "resource": RESOURCE, **over}
    return server.token({k: v for k, v in form.items() if v is not None})


def verifier() -> str:
    return secrets.token_urlsafe(48)


def test_code_then_refresh(auth, signing_key):
    server, *_ = auth
    client = register(server)
    v = verifier()
    status, body = exchange(server, client, login(server, client, v), v)
    assert status == 200 and body["token_type"] == "Bearer" and body["scope"] == f"{READ} {WRITE}"
    claims = jwt.decode(body["access_token"], signing_key.public_key, algorithms=["RS256"], issuer=ISSUER, audience=RESOURCE)
    assert claims["sub"] == "alice" and claims["cognito:groups"] == ["team:acme"] and claims["scope"] == f"{READ} {WRITE}"
    assert claims["aud"] == RESOURCE  # RFC 8707: the resource granted
    status, again = server.token({"grant_type": "refresh_token", "refresh_token": body["refresh_token"], "client_id": client})
    assert status == 200 and again["access_token"] != body["access_token"]
    assert jwt.decode(again["access_token"], signing_key.public_key, algorithms=["RS256"], audience=RESOURCE)["aud"] == RESOURCE
    status, narrower = server.token({"grant_type": "refresh_token", "refresh_token": again["refresh_token"],
                                     "client_id": client, "scope": READ})
    assert status == 200 and narrower["scope"] == READ
    status, wider_again = server.token({"grant_type": "refresh_token", "refresh_token": narrower["refresh_token"],
                                        "client_id": client})
    assert status == 200 and wider_again["scope"] == f"{READ} {WRITE}"  # a narrower refresh does not shrink the grant


@pytest.mark.parametrize("wrong", [None, "", "x" * 43, "short"])
def test_wrong_or_missing_verifier(auth, wrong):
    server, *_ = auth
    client = register(server)
    v = verifier()
    code = login(server, client, v)
    status, body = exchange(server, client, code, wrong)
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body
    status, body = exchange(server, client, code, v)  # a failed attempt used the code up
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body


def test_code_reuse(auth):
    server, *_ = auth
    client = register(server)
    v = verifier()
    code = login(server, client, v)
    assert exchange(server, client, code, v)[0] == 200
    status, body = exchange(server, client, code, v)
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body


def test_code_expires(auth):
    server, _, clock, _ = auth
    client = register(server)
    v = verifier()
    code = login(server, client, v)
    clock.now += server.policy.code_ttl + 1
    status, body = exchange(server, client, code, v)
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body


def test_code_from_another_client(auth):
    server, *_ = auth
    mine, theirs = register(server), register(server)
    v = verifier()
    code = login(server, theirs, v)
    status, body = exchange(server, mine, code, v)
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body


def test_redirect_uri_must_match_exactly(auth):
    server, *_ = auth
    client = register(server)
    for other in ("http://127.0.0.1:33333/callback/", "http://127.0.0.1:33334/callback?x=1", "http://localhost:33333/callback",
                  "http://127.0.0.1:33334/Callback", "https://127.0.0.1:33333/callback", "https://evil.example/cb",
                  "http://127.0.0.1:33334/callback#f", "http://user@127.0.0.1:33334/callback", "http://127.0.0.1:x/callback"):
        with pytest.raises(OAuthError) as err:
            authorize(server, client, verifier(), redirect_uri=other)
        assert err.value.location is None and not err.value.redirect  # never sent to an unregistered URI
    v = verifier()
    code = login(server, client, v)
    status, body = exchange(server, client, code, v, redirect_uri=REDIRECT + "x")
    assert (status, body["error"]) == (400, "invalid_grant")


@pytest.mark.parametrize("over, error", [
    ({"resource": "https://other.example/mcp"}, "invalid_target"),
    ({"resource": None}, "invalid_target"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge_method": None}, "invalid_request"),
    ({"state": "s" * 1025}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"scope": f"{READ} openid"}, "invalid_scope"),
])
def test_refused_requests_go_back_to_the_client_with_iss(auth, over, error):
    server, *_ = auth
    client = register(server)
    with pytest.raises(OAuthError) as err:
        authorize(server, client, verifier(), **over)
    query = parse_qs(urlsplit(err.value.location).query)
    assert err.value.location.startswith(REDIRECT + "?") and query["error"] == [error] and query["iss"] == [ISSUER]
    assert "code" not in query


def test_scopes_beyond_the_clients(auth):
    server, *_ = auth
    client = register(server, scope=READ)
    with pytest.raises(OAuthError) as err:
        authorize(server, client, verifier(), scope=f"{READ} {WRITE}")
    assert err.value.error == "invalid_scope"
    v = verifier()
    status, body = exchange(server, client, login(server, client, v, scope=None), v)
    assert status == 200 and body["scope"] == READ  # no scope asked: the client's own
    status, body = server.token({"grant_type": "refresh_token", "refresh_token": body["refresh_token"],
                                 "client_id": client, "scope": f"{READ} {WRITE}"})
    assert (status, body["error"]) == (400, "invalid_scope") and "access_token" not in body


def test_expired_or_foreign_refresh_token(auth):
    server, _, clock, _ = auth
    client, other = register(server), register(server)
    v = verifier()
    refresh = exchange(server, client, login(server, client, v), v)[1]["refresh_token"]
    status, body = server.token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": other})
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body
    clock.now += 3601
    status, body = server.token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client})
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body


def test_a_removed_user_gets_no_more_tokens(auth):
    server, _, _, users = auth
    client = register(server)
    v = verifier()
    refresh = exchange(server, client, login(server, client, v), v)[1]["refresh_token"]
    users.delete("alice")
    status, body = server.token({"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client})
    assert (status, body["error"]) == (400, "invalid_grant")


def test_a_pending_login_is_used_once_and_expires(auth):
    server, _, clock, _ = auth
    client = register(server)
    txn, *_ = authorize(server, client, verifier())
    server.complete(txn, {"user": "alice"})
    with pytest.raises(OAuthError):
        server.complete(txn, {"user": "alice"})
    txn, *_ = authorize(server, client, verifier())
    clock.now += server.policy.pending_ttl + 1
    assert server.pending(txn) is None
    with pytest.raises(OAuthError):
        server.complete(txn, {"user": "alice"})


@pytest.mark.parametrize("body, error", [
    ({"redirect_uris": ["http://example.com/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["myapp:/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": []}, "invalid_redirect_uri"),
    ({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT], "scope": "xmemo/memory:admin"}, "invalid_client_metadata"),
])
def test_registration_rules(auth, body, error):
    server, *_ = auth
    with pytest.raises(OAuthError) as err:
        server.register(body, source="10.0.0.2")
    assert err.value.error == error


def test_registration_accepts_https_and_loopback_and_is_rate_limited(auth):
    server, *_ = auth
    answer = server.register({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "http://localhost:6274/cb"]},
                             source="10.0.0.3")
    assert answer["token_endpoint_auth_method"] == "none" and answer["scope"] == " ".join(ALL)
    for _ in range(2):
        server.register({"redirect_uris": [REDIRECT]}, source="10.0.0.3")
    with pytest.raises(OAuthError) as err:  # the policy allows 3 per window per source
        server.register({"redirect_uris": [REDIRECT]}, source="10.0.0.3")
    assert err.value.status == 429
    server.register({"redirect_uris": [REDIRECT]}, source="10.0.0.4")  # another source is unaffected


def test_the_store_never_holds_a_code_or_token(auth, tmp_path):
    server, store, *_ = auth
    client = register(server)
    v = verifier()
    code = login(server, client, v)
    tokens = exchange(server, client, login(server, client, v), v)[1]
    secrets_seen = [code, tokens["refresh_token"], tokens["access_token"], "alice-password"]
    if hasattr(store, "path"):
        rows = sqlite3.connect(store.path).execute("SELECT kind, key, item FROM oauth_state").fetchall()
        dump = repr(rows)
    else:
        dump = repr(store._client.scan(TableName=store.table)["Items"])
    assert all(s not in dump for s in secrets_seen)


def test_state_is_optional_and_echoed_only_when_sent(auth):
    """OAuth 2.1 §4.1.1 / MCP authorization: PKCE is the CSRF protection; `state` is the
    client's to send or not (the TypeScript SDK's example provider sends none)."""
    server, *_ = auth
    client = register(server)
    v = verifier()
    txn, request, _ = authorize(server, client, v, state=None)
    location = server.complete(txn, {"user": "alice"})
    query = parse_qs(urlsplit(location).query)
    assert "state" not in query and query["iss"] == [ISSUER]
    status, body = exchange(server, client, query["code"][0], v)
    assert status == 200 and body["access_token"]
    with pytest.raises(OAuthError) as err:  # PKCE stays mandatory without state
        authorize(server, client, v, state=None, code_challenge=None, code_challenge_method=None)
    query = parse_qs(urlsplit(err.value.location).query)
    assert query["error"] == ["invalid_request"] and "state" not in query


@pytest.mark.parametrize("registered, used", [
    ("http://127.0.0.1:33333/callback", "http://127.0.0.1:51234/callback"),
    ("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback"),
    ("http://localhost/callback", "http://localhost:51234/callback"),
    ("http://[::1]/cb?app=x", "http://[::1]:51234/cb?app=x"),
    ("http://localhost:8080/callback", "http://localhost/callback"),
])
def test_a_loopback_redirect_matches_on_any_port(auth, registered, used):
    """RFC 8252 §7.3: native apps listen on an ephemeral port; host, path and query stay exact."""
    server, *_ = auth
    client = server.register({"redirect_uris": [registered]}, source="10.0.0.9")["client_id"]
    v = verifier()
    txn, request, _ = authorize(server, client, v, redirect_uri=used)
    assert request.redirect_uri == used
    location = server.complete(txn, {"user": "alice"})
    assert location.startswith(used + ("&" if "?" in used else "?"))
    code = parse_qs(urlsplit(location).query)["code"][0]
    status, _ = exchange(server, client, code, v, redirect_uri=registered)  # the token request names the one used
    assert status == 400
    code = parse_qs(urlsplit(server.complete(authorize(server, client, v, redirect_uri=used)[0], {"user": "alice"})).query)["code"][0]
    assert exchange(server, client, code, v, redirect_uri=used)[0] == 200


def test_https_redirects_stay_exact_with_a_port(auth):
    server, *_ = auth
    client = server.register({"redirect_uris": ["https://app.example:8443/cb"]}, source="10.0.0.9")["client_id"]
    for other in ("https://app.example:8444/cb", "https://app.example/cb"):
        with pytest.raises(OAuthError) as err:
            authorize(server, client, verifier(), redirect_uri=other)
        assert err.value.location is None


def test_a_metadata_document_client_with_portless_loopback_callbacks(auth):
    """The shape Claude Code publishes: `http://localhost/callback` and
    `http://127.0.0.1/callback`, then a listener on an ephemeral port."""
    from .cimd_server import DocumentServer

    server, *_ = auth
    docs = DocumentServer()
    try:
        url = docs.client_document("/claude-like.json", ["http://localhost/callback", "http://127.0.0.1/callback"],
                                   client_name="Claude Code-like")
        v = verifier()
        used = "http://localhost:54321/callback"
        txn, request, _ = authorize(server, url, v, redirect_uri=used, state=None)
        code = parse_qs(urlsplit(server.complete(txn, {"user": "alice"})).query)["code"][0]
        status, body = exchange(server, url, code, v, redirect_uri=used)
        assert status == 200 and body["access_token"]
        with pytest.raises(OAuthError):  # another path on the same host is still refused
            authorize(server, url, v, redirect_uri="http://localhost:54321/other")
    finally:
        docs.close()


def basic(client_id: str, secret: str) -> str:
    import base64
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


@pytest.mark.parametrize("method", ["client_secret_post", "client_secret_basic"])
def test_a_confidential_client_registers_and_authenticates_either_way(auth, method):
    """RFC 7591: a confidential registration gets a real secret, shown once and stored as
    a digest; the token endpoint accepts it by HTTP Basic or in the form, and refuses
    the client without it (401 invalid_client)."""
    server, store, *_ = auth
    answer = server.register({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": method}, source="10.0.0.5")
    client, secret = answer["client_id"], answer["client_secret"]
    assert answer["token_endpoint_auth_method"] == method and answer["client_secret_expires_at"] == 0 and len(secret) >= 43
    stored = store.get("client", client)
    assert secret not in repr(stored) and stored["secret_hash"]
    v = verifier()
    code = login(server, client, v)
    status, body = exchange(server, client, code, v)  # no secret
    assert (status, body["error"]) == (401, "invalid_client")
    code = login(server, client, v)
    status, body = exchange(server, client, code, v, client_secret="wrong")
    assert (status, body["error"]) == (401, "invalid_client")
    code = login(server, client, v)
    status, tokens = exchange(server, client, code, v, client_secret=secret)  # client_secret_post
    assert status == 200 and tokens["access_token"]
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    status, body = server.token(refresh, basic(client, "wrong"))
    assert (status, body["error"]) == (401, "invalid_client")
    status, again = server.token(refresh, basic(client, secret))  # client_secret_basic, no client_id in the form
    assert status == 200 and again["access_token"]
    status, body = server.token({**refresh, "refresh_token": again["refresh_token"], "client_secret": secret}, basic(client, secret))
    assert (status, body["error"]) == (400, "invalid_request")  # one method at a time


def test_a_public_client_presenting_a_secret_is_refused(auth):
    server, *_ = auth
    client = register(server)
    v = verifier()
    status, body = exchange(server, client, login(server, client, v), v, client_secret="guess")
    assert (status, body["error"]) == (401, "invalid_client")
    status, body = server.token({"grant_type": "authorization_code", "code": login(server, client, v), "redirect_uri": REDIRECT,
                                 "code_verifier": v}, "Basic !!!")
    assert (status, body["error"]) == (401, "invalid_client")



def refresh_with(server, client, token):
    return server.token({"grant_type": "refresh_token", "refresh_token": token, "client_id": client})


def test_refresh_tokens_rotate_and_reuse_revokes_the_family(auth):
    """RFC 9700 §4.14.2: each use answers a new refresh token; presenting a retired one
    (the client's stale copy, or a thief's) revokes every token of that grant."""
    server, *_ = auth
    client = register(server)
    v = verifier()
    first = exchange(server, client, login(server, client, v), v)[1]["refresh_token"]
    status, second = refresh_with(server, client, first)
    assert status == 200 and second["refresh_token"] != first
    status, third = refresh_with(server, client, second["refresh_token"])
    assert status == 200 and third["refresh_token"] not in (first, second["refresh_token"])
    other_login = exchange(server, client, login(server, client, v), v)[1]["refresh_token"]  # another grant
    status, body = refresh_with(server, client, first)  # reuse of a retired token
    assert (status, body["error"]) == (400, "invalid_grant") and "already used" in body["error_description"]
    status, body = refresh_with(server, client, third["refresh_token"])  # the live one died with its family
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body
    assert refresh_with(server, client, other_login)[0] == 200  # other grants are untouched


def test_a_refused_refresh_spends_nothing(auth):
    """A refresh refused before it is answered (wrong client, wider scope) leaves the token
    usable: only an answered refresh retires it."""
    server, *_ = auth
    client, other = register(server), register(server)
    v = verifier()
    token = exchange(server, client, login(server, client, v), v)[1]["refresh_token"]
    assert refresh_with(server, other, token)[0] == 400
    assert server.token({"grant_type": "refresh_token", "refresh_token": token, "client_id": client, "scope": "x"})[0] == 400
    assert refresh_with(server, client, token)[0] == 200


def test_a_replayed_code_revokes_the_grant_made_from_it(auth):
    """RFC 6749 §4.1.2 / OAuth 2.1 §4.1.3: the code was stolen or the client is confused;
    either way the refresh token it produced stops working."""
    server, *_ = auth
    client = register(server)
    v = verifier()
    code = login(server, client, v)
    status, tokens = exchange(server, client, code, v)
    assert status == 200
    status, body = exchange(server, client, code, v)
    assert (status, body["error"]) == (400, "invalid_grant") and "revoked" in body["error_description"]
    status, body = refresh_with(server, client, tokens["refresh_token"])
    assert (status, body["error"]) == (400, "invalid_grant") and "access_token" not in body


def test_the_upstream_refresh_token_is_sealed_under_the_clients(auth):
    from xmemo.oauth.seal import seal, unseal

    server, store, *_ = auth
    client = register(server)
    v = verifier()
    token = exchange(server, client, login(server, client, v), v)[1]["refresh_token"]
    from xmemo.oauth.state import digest
    sealed = store.get("refresh", digest(token))["sealed"]
    upstream = unseal(token, sealed)
    assert upstream and upstream != token and store.get("local_refresh", digest(upstream)) is not None
    assert unseal("another-token", sealed) is None and unseal(token, sealed[:-4] + "AAAA") is None
    assert unseal("k", seal("k", "value")) == "value" and seal("k", "value") != seal("k2", "value")


def test_a_refresh_token_bound_before_rotation_keeps_working_once_then_rotates(auth):
    """A deployment updated in place: clients hold the provider's own refresh token,
    bound as it used to be (no family). It is accepted once, answered with a token of
    this server, and retired like any other."""
    from xmemo.oauth.state import digest

    server, store, *_ = auth
    client = register(server)
    v = verifier()
    code = login(server, client, v)
    legacy = exchange(server, client, code, v)[1]
    upstream = __import__("xmemo.oauth.seal", fromlist=["unseal"]).unseal(
        legacy["refresh_token"], store.get("refresh", digest(legacy["refresh_token"]))["sealed"])
    store.put("refresh", digest(upstream), {"client_id": client, "scopes": [READ, WRITE], "resource": RESOURCE}, 3600)
    status, body = refresh_with(server, client, upstream)
    assert status == 200 and body["refresh_token"] != upstream
    assert refresh_with(server, client, body["refresh_token"])[0] == 200
    assert refresh_with(server, client, upstream)[1]["error"] == "invalid_grant"
