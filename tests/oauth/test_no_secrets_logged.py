"""No token, code, password or client secret ever reaches a log: every log record (all
loggers, DEBUG and up) and everything printed is captured while full flows run through
the façades, the local one as `xmemo serve` builds it and the AWS one over DynamoDB
(moto) and the Cognito stand-in, refusals, throttling and reuse detection included."""

from __future__ import annotations

import base64
import logging
import re
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

from xmemo.config import Settings
from xmemo.local.clients import ClientRegistry
from xmemo.local.oauth import local_facade
from xmemo.local.users import UserRegistry
from xmemo.oauth.server import s256

from . import test_aws_facade as aws_flow

PASSWORD = "carol-secret-password"
WRONG = "carol-wrong-password"


def test_a_full_local_flow_logs_no_secret(tmp_path, signing_key, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    settings = Settings(data_dir=tmp_path, port=9999, embedder="none")
    UserRegistry(tmp_path).add("carol", PASSWORD, ["acme"])
    base = "http://127.0.0.1:9999"
    facade = local_facade(settings, signing_key, ClientRegistry(tmp_path), base)
    handle = lambda method, path, query="", body=b"", headers=None: facade.handle(method, path, query, headers or {}, body, "loopback")
    seen: list[str] = [PASSWORD, WRONG]

    reg = handle("POST", "/oauth2/register", body=b'{"redirect_uris": ["http://127.0.0.1/cb"], '
                                                   b'"token_endpoint_auth_method": "client_secret_basic"}')
    import json
    client = json.loads(reg.body)
    seen.append(client["client_secret"])
    basic = {"Authorization": "Basic " + base64.b64encode(f"{client['client_id']}:{client['client_secret']}".encode()).decode()}
    verifier = secrets.token_urlsafe(48)
    seen.append(verifier)
    query = urlencode({"response_type": "code", "client_id": client["client_id"], "redirect_uri": "http://127.0.0.1:41000/cb",
                       "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": f"{base}/mcp",
                       "state": "state-value-1"})
    txn = re.search(r'name="txn" value="([^"]+)"', handle("GET", "/oauth2/authorize", query).body.decode()).group(1)
    seen.append(txn)
    for password in (WRONG, WRONG, WRONG, WRONG):  # wrong passwords, the throttle's log lines
        handle("POST", "/oauth2/authorize", body=urlencode({"txn": txn, "username": "carol", "password": password}).encode())
    txn = re.search(r'name="txn" value="([^"]+)"', handle("GET", "/oauth2/authorize", query).body.decode()).group(1)
    seen.append(txn)
    facade._throttle.succeeded("carol")  # (the test's own wrong passwords made it wait)
    done = handle("POST", "/oauth2/authorize", body=urlencode({"txn": txn, "username": "carol", "password": PASSWORD}).encode())
    code = parse_qs(urlsplit(done.headers["Location"]).query)["code"][0]
    seen.append(code)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": "http://127.0.0.1:41000/cb", "code_verifier": verifier}
    tokens = json.loads(handle("POST", "/oauth2/token", body=urlencode(form).encode(), headers=basic).body)
    seen += [tokens["access_token"], tokens["refresh_token"]]
    refreshed = json.loads(handle("POST", "/oauth2/token", headers=basic, body=urlencode(
        {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}).encode()).body)
    seen += [refreshed["access_token"], refreshed["refresh_token"]]
    handle("POST", "/oauth2/token", headers=basic, body=urlencode(  # reuse: the family is revoked
        {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}).encode())
    handle("POST", "/oauth2/token", body=urlencode(form).encode(), headers=basic)  # a replayed code
    handle("POST", "/oauth2/token", body=urlencode({"grant_type": "client_credentials", "client_id": "x",
                                                    "client_secret": "client-credentials-secret"}).encode())
    seen.append("client-credentials-secret")

    out = capsys.readouterr()
    logged = "\n".join([out.out, out.err, *(r.getMessage() for r in caplog.records), caplog.text])
    assert "login failed" in logged  # the throttle did log
    leaked = [s[:6] + "…" for s in seen if s in logged]
    assert not leaked, leaked


def test_a_full_aws_flow_logs_no_secret(aws, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    facade, cognito, *_ = aws
    client_id, code, verifier = aws_flow.logged_in(facade, cognito)
    status, tokens, _ = aws_flow.redeem(facade, client_id, code, verifier)
    assert status == 200
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id}
    status, again, _ = aws_flow.post_form(facade, refresh)
    aws_flow.post_form(facade, refresh)  # reuse
    aws_flow.redeem(facade, client_id, code, verifier)  # replay
    seen = [code, verifier, tokens["access_token"], tokens["refresh_token"], again["access_token"], again["refresh_token"],
            *cognito.refresh_tokens, *(r.get("code", "") for r in cognito.requests if r.get("code"))]
    out = capsys.readouterr()
    logged = "\n".join([out.out, out.err, caplog.text])
    leaked = [s[:6] + "…" for s in seen if s and s in logged]
    assert not leaked, leaked


from .test_aws_facade import aws  # noqa: E402,F401  (the fixture)
