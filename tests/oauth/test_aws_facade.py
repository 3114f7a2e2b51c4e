"""The authorization server as the Lambda runs it (`functions/oauth/app.py` →
`xmemo.oauth.aws`): API Gateway events in, state in DynamoDB (moto's server over HTTP),
the person sent to Cognito's hosted login and Cognito's tokens relayed back (a stand-in
for Cognito's token endpoint on loopback). The events/oauth/*.json files run through it."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from xmemo.config import Settings
from xmemo.local.events import rest_event
from xmemo.oauth.aws import build_facade, handle_event

from tests.event_checks import check_oauth_metadata, check_oauth_unconfigured

from .cognito_standin import CognitoStandIn
from .conftest import create_table, dynamo_client

ROOT = Path(__file__).resolve().parents[2]
BASE = "https://api.example.com"
APP = "https://app.example/oauth/callback"


def load(name: str) -> dict:
    return json.loads((ROOT / "events" / "oauth" / f"{name}.json").read_text())


@pytest.fixture
def aws(moto_url, request):
    cognito = CognitoStandIn("cognito-interactive", f"{BASE}/oauth2/callback")
    client = dynamo_client(moto_url)
    table = f"facade-{request.node.name}"[:200]
    create_table(client, table)
    settings = Settings(public_base_url=BASE, oauth_table=table, cognito_domain=cognito.url,
                        cognito_client_id="cognito-interactive", embedder="none")
    yield build_facade(settings, client), cognito, client, table
    cognito.close()


def call(facade, event):
    out = handle_event(event, facade)
    body = out["body"]
    return out["statusCode"], (json.loads(body) if out["headers"].get("Content-Type") == "application/json" else body), out["headers"]


def get(facade, path: str, params: dict):
    return call(facade, rest_event("GET", path, path, query=urlencode(params), headers={"Host": "api.example.com"}))


def post_form(facade, form: dict):
    return call(facade, rest_event("POST", "/oauth2/token", "/oauth2/token", body=urlencode(form),
                                   headers={"Content-Type": "application/x-www-form-urlencoded"}))


def consent(facade, params: dict, *, decision: str = "allow", cookie: str | None = "same", origin: str | None = None):
    """The person on the consent page: what it shows, then their answer (with the cookie
    the page set, another one, or none)."""
    status, page, headers = get(facade, "/oauth2/authorize", params)
    assert status == 200 and "Allow access to your XMemo memories?" in page, page
    assert params["client_id"] in page and params["redirect_uri"] in page
    set_cookie = headers["Set-Cookie"]
    assert set_cookie.startswith("__Host-xmemo-consent=") and all(a in set_cookie for a in ("Secure", "HttpOnly", "SameSite=Lax"))
    token = set_cookie.split(";")[0].split("=", 1)[1]
    txn = re.search(r'name="txn" value="([^"]+)"', page).group(1)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    sent = {"Cookie": f"__Host-xmemo-consent={token if cookie == 'same' else cookie}"} if cookie else {}
    return call(facade, rest_event("POST", "/oauth2/authorize", "/oauth2/authorize",
                                   body=urlencode({"txn": txn, "csrf": csrf, "decision": decision}),
                                   headers={"Content-Type": "application/x-www-form-urlencoded", **sent,
                                            **({"Origin": origin} if origin else {})}))


def params_for(client_id: str, challenge: str = "c" * 43, **over) -> dict:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": APP, "state": "app-state",
              "code_challenge": challenge, "code_challenge_method": "S256", "resource": f"{BASE}/mcp", **over}
    return {k: v for k, v in params.items() if v is not None}


def test_the_event_files(aws):
    facade, *_ = aws
    status, meta, _ = call(facade, load("metadata"))
    check_oauth_metadata(status, meta, BASE)
    status, reg, headers = call(facade, load("register"))
    assert status == 201 and reg["client_id"].startswith("dcr_") and headers["Cache-Control"] == "no-store"
    status, refused, _ = call(facade, load("token_bad_code"))
    assert (status, refused["error"]) == (400, "invalid_grant")


def test_login_at_cognito_then_code_token_and_refresh(aws):
    facade, cognito, client, table = aws
    client_id = call(facade, load("register"))[1]["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    status, _, headers = consent(facade, params_for(client_id, challenge, scope="xmemo/memory:read xmemo/memory:write"))
    hosted = urlsplit(headers["Location"])
    upstream = {k: v[0] for k, v in parse_qs(hosted.query).items()}
    assert status == 303 and headers["Location"].startswith(cognito.url + "/oauth2/authorize?")
    assert upstream["client_id"] == "cognito-interactive" and upstream["redirect_uri"] == f"{BASE}/oauth2/callback"
    assert upstream["code_challenge_method"] == "S256" and upstream["code_challenge"] != challenge  # its own PKCE
    assert upstream["scope"] == "openid xmemo/memory:read xmemo/memory:write"

    cognito_code = cognito.login(upstream["code_challenge"])
    status, _, headers = get(facade, "/oauth2/callback", {"code": cognito_code, "state": upstream["state"]})
    back = {k: v[0] for k, v in parse_qs(urlsplit(headers["Location"]).query).items()}
    assert status == 302 and headers["Location"].startswith(APP + "?")
    assert back["state"] == "app-state" and back["iss"] == BASE and back["code"] != cognito_code
    status, _, _ = get(facade, "/oauth2/callback", {"code": cognito_code, "state": upstream["state"]})
    assert status == 400  # that login is over

    status, tokens, _ = post_form(facade, {"grant_type": "authorization_code", "code": back["code"], "client_id": client_id,
                                           "redirect_uri": APP, "code_verifier": verifier, "resource": f"{BASE}/mcp"})
    assert status == 200 and tokens["access_token"].startswith("cognito-access-") and tokens["refresh_token"]
    status, again, _ = post_form(facade, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                                          "client_id": client_id})
    assert status == 200 and again["access_token"] != tokens["access_token"]
    assert again["refresh_token"] != tokens["refresh_token"]  # the façade's own, rotated
    assert all(t not in cognito.refresh_tokens for t in (tokens["refresh_token"], again["refresh_token"]))  # Cognito's never leaves
    status, refused, _ = post_form(facade, {"grant_type": "refresh_token", "refresh_token": again["refresh_token"],
                                            "client_id": call(facade, load("register"))[1]["client_id"]})
    assert (status, refused["error"]) == (400, "invalid_grant")
    assert [r["grant_type"] for r in cognito.requests] == ["authorization_code", "refresh_token"]
    items = repr(client.scan(TableName=table)["Items"])
    assert tokens["refresh_token"] not in items and back["code"] not in items and "cognito-access" not in items
    assert not any(t in items for t in cognito.refresh_tokens)  # sealed, never verbatim
    assert cognito_code not in items  # Cognito's code waited for /token sealed under ours


def test_a_cancelled_login_goes_back_to_the_client(aws):
    facade, *_ = aws
    client_id = call(facade, load("register"))[1]["client_id"]
    status, _, headers = consent(facade, params_for(client_id, state="s"))
    txn = parse_qs(urlsplit(headers["Location"]).query)["state"][0]
    status, _, headers = get(facade, "/oauth2/callback", {"error": "access_denied", "state": txn})
    back = parse_qs(urlsplit(headers["Location"]).query)
    assert status == 302 and back["error"] == ["access_denied"] and back["state"] == ["s"] and "code" not in back


def test_the_person_sees_which_client_asks_before_the_login(aws):
    """Cognito's login is the same for every client, and a person already logged in there
    passes it silently: without this page any registered client could get their code."""
    facade, cognito, *_ = aws
    client_id = call(facade, load("register"))[1]["client_id"]
    status, _, headers = consent(facade, params_for(client_id), decision="deny")
    back = parse_qs(urlsplit(headers["Location"]).query)
    assert status == 303 and headers["Location"].startswith(APP + "?") and back["error"] == ["access_denied"]
    for cookie in (None, "forged-by-another-site"):
        status, page, headers = consent(facade, params_for(client_id), cookie=cookie)
        assert status == 403 and "Location" not in headers and "consent page" in page
    assert cognito.requests == []  # nothing reached Cognito


def test_client_credentials_are_relayed_to_cognito(aws):
    facade, cognito, *_ = aws
    status, body, _ = call(facade, rest_event("POST", "/oauth2/token", "/oauth2/token",
                                              body="grant_type=client_credentials&client_id=agent&client_secret=s",
                                              headers={"Content-Type": "application/x-www-form-urlencoded"}))
    assert (status, body["error"]) == (400, "invalid_client")  # Cognito's answer, relayed
    assert cognito.requests[-1] == {"grant_type": "client_credentials", "client_id": "agent", "client_secret": "s"}


def test_loopback_http_client_metadata_is_refused_on_aws(aws):
    facade, *_ = aws
    status, page, _ = get(facade, "/oauth2/authorize", {"client_id": "http://127.0.0.1:9/client.json",
                                                         "redirect_uri": APP, "response_type": "code"})
    assert status == 400 and "over https" in page


def test_unconfigured_is_a_clear_404(monkeypatch):
    from xmemo.oauth import aws as module

    module._default_facade.cache_clear()
    monkeypatch.delenv("XMEMO_PUBLIC_BASE_URL", raising=False)
    try:
        out = handle_event(load("metadata"))
    finally:
        module._default_facade.cache_clear()
    check_oauth_unconfigured(out["statusCode"], out["body"])


def logged_in(facade, cognito):
    """A client registered, a person through consent and Cognito's login: (client id, the
    code, its verifier)."""
    client_id = call(facade, load("register"))[1]["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    _, _, headers = consent(facade, params_for(client_id, challenge, state=None))
    upstream = {k: v[0] for k, v in parse_qs(urlsplit(headers["Location"]).query).items()}
    _, _, headers = get(facade, "/oauth2/callback", {"code": cognito.login(upstream["code_challenge"]), "state": upstream["state"]})
    back = {k: v[0] for k, v in parse_qs(urlsplit(headers["Location"]).query).items()}
    assert "state" not in back  # none was sent
    return client_id, back["code"], verifier


def redeem(facade, client_id, code, verifier):
    return post_form(facade, {"grant_type": "authorization_code", "code": code, "client_id": client_id,
                              "redirect_uri": APP, "code_verifier": verifier})


def test_rotation_and_reuse_detection_hold_through_the_facade(aws):
    """Cognito does not rotate: the façade hands out its own refresh tokens (DynamoDB),
    rotates them on every use, and revokes the grant when a retired one comes back;
    Cognito is not even asked then."""
    facade, cognito, *_ = aws
    client_id, code, verifier = logged_in(facade, cognito)
    status, tokens, _ = redeem(facade, client_id, code, verifier)
    assert status == 200
    refresh = lambda t: post_form(facade, {"grant_type": "refresh_token", "refresh_token": t, "client_id": client_id})
    status, second, _ = refresh(tokens["refresh_token"])
    assert status == 200 and second["refresh_token"] != tokens["refresh_token"]
    asked = len(cognito.requests)
    status, body, _ = refresh(tokens["refresh_token"])
    assert (status, body["error"]) == (400, "invalid_grant")
    status, body, _ = refresh(second["refresh_token"])
    assert (status, body["error"]) == (400, "invalid_grant")
    assert len(cognito.requests) == asked


def test_a_replayed_code_revokes_its_grant_through_the_facade(aws):
    facade, cognito, *_ = aws
    client_id, code, verifier = logged_in(facade, cognito)
    status, tokens, _ = redeem(facade, client_id, code, verifier)
    assert status == 200
    status, body, _ = redeem(facade, client_id, code, verifier)
    assert (status, body["error"]) == (400, "invalid_grant")
    status, body, _ = post_form(facade, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id})
    assert (status, body["error"]) == (400, "invalid_grant")


def test_the_consent_page_accepts_answers_only_from_its_own_origin(aws):
    """The cookie already binds the answer to the browser; the Origin check also stops a
    page of another site from submitting it (the cookie is SameSite=Lax, not Strict)."""
    facade, cognito, *_ = aws
    client_id = call(facade, load("register"))[1]["client_id"]
    status, page, headers = consent(facade, params_for(client_id), origin="https://evil.example")
    assert status == 403 and "Location" not in headers and "another site" in page
    status, _, headers = consent(facade, params_for(client_id), origin=BASE)
    assert status == 303 and headers["Location"].startswith(cognito.url)


def test_cors_preflights_through_the_lambda(aws):
    facade, *_ = aws
    for path in ("/.well-known/oauth-authorization-server", "/oauth2/register", "/oauth2/token"):
        out = handle_event(rest_event("OPTIONS", path, path, headers={"Origin": "http://localhost:6274",
                                                                      "Access-Control-Request-Method": "POST"}), facade)
        assert out["statusCode"] == 204 and out["headers"]["Access-Control-Allow-Origin"] == "*"
        assert "Access-Control-Allow-Credentials" not in out["headers"]
    status, _, headers = call(facade, load("metadata"))
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "*"
    out = handle_event(rest_event("OPTIONS", "/oauth2/authorize", "/oauth2/authorize"), facade)
    assert "Access-Control-Allow-Origin" not in out["headers"]
