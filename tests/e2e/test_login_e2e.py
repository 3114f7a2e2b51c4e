"""`xmemo login` (loopback redirect + PKCE, refresh token stored owner-only) and the
credentials that use it, against the local gateway over HTTP: `xmemo mcp-stdio` on the
stored login and on client credentials, refreshing before expiry and once after a 401,
and never printing a token."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import time
from dataclasses import replace
from urllib.parse import urljoin

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway, xmemo_command

pytestmark = pytest.mark.e2e
PASSWORD = "login-password-42"
ACCESS_TTL = 3


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    with start_gateway(tmp_path_factory.mktemp("login-gateway"), {"XMEMO_OAUTH_ACCESS_TTL_S": str(ACCESS_TTL)}, quiet=False, cwd=ROOT) as gw:
        gw.add_user("fred", PASSWORD, "ops")
        yield gw


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return tmp_path_factory.mktemp("config") / "xmemo"


def token_calls(gateway) -> int:
    return sum(" /oauth2/token 200 " in line for line in (gateway.settings.data_dir / "gateway.log").read_text().splitlines())


def browse(url: str) -> None:
    """The person: the login form, then the redirect to the CLI's loopback listener."""
    with httpx.Client(timeout=30) as web:
        page = web.get(url)
        txn = re.search(r'name="txn" value="([^"]+)"', page.text).group(1)
        sent = web.post(urljoin(url, "/oauth2/authorize"), data={"txn": txn, "username": "fred", "password": PASSWORD})
        assert sent.status_code == 303
        landed = web.get(sent.headers["location"])
        assert landed.status_code == 200 and "Logged in" in landed.text


@pytest.fixture(scope="module")
def logged_in(gateway, config):
    env = {**gateway.env, "XMEMO_CONFIG_DIR": str(config)}
    proc = subprocess.Popen([*xmemo_command(), "login", "--url", gateway.url + "/mcp", "--no-browser", "--timeout", "60"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("Open this URL")
    url = proc.stdout.readline().strip()
    browse(url)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return env, out + err


def test_login_stores_only_a_refresh_token_owner_only(logged_in, config, gateway):
    _, printed = logged_in
    assert f"Logged in to {gateway.url}" in printed and "eyJ" not in printed
    path = config / "logins.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(config.stat().st_mode) == 0o700
    stored = json.loads(path.read_text())["logins"][gateway.url]
    assert stored["refresh_token"] and stored["resource"] == gateway.url + "/mcp"
    assert stored["token_endpoint"] == gateway.url + "/oauth2/token" and stored["client_id"].startswith("dcr_")
    assert "eyJ" not in path.read_text()  # no access token (a JWT) is ever written
    assert printed.count(stored["refresh_token"]) == 0


def stdio(env, url: str, lines: list[dict], pause_before_last: float = 0.0) -> tuple[list[dict], str]:
    proc = subprocess.Popen([*xmemo_command(), "mcp-stdio", "--url", url], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answers = []
    for i, message in enumerate(lines):
        if i == len(lines) - 1 and pause_before_last:
            time.sleep(pause_before_last)
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        if "id" in message:
            answers.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    err = proc.stderr.read()
    proc.wait(timeout=30)
    return answers, err


def session(topic: str) -> list[dict]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": f"{topic} is on Friday."}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": f"{topic} Friday"}}},
    ]


def test_mcp_stdio_on_the_stored_login_through_expiry(logged_in, gateway):
    env, _ = logged_in
    before = token_calls(gateway)
    answers, err = stdio(env, gateway.url + "/mcp", session("The ops review"), pause_before_last=ACCESS_TTL + 1)
    assert [a["id"] for a in answers] == [1, 2, 3] and all("error" not in a for a in answers), answers
    recalled = answers[2]["result"]["content"][0]["text"]
    assert "The ops review is on Friday." in recalled and "Boundary: owner:fred" in recalled
    assert token_calls(gateway) - before >= 2  # a token at start, a new one after the first expired
    assert "eyJ" not in err and "Bearer" not in err


def test_one_retry_after_a_401(logged_in, gateway, monkeypatch):
    """A token the server no longer accepts (here: not a token at all) is replaced once."""
    from xmemo import credentials
    from xmemo.cli.mcp_stdio import Bridge

    monkeypatch.setenv("XMEMO_CONFIG_DIR", logged_in[0]["XMEMO_CONFIG_DIR"])
    login = credentials.load(gateway.url)
    source = credentials.TokenSource(login=replace(login, access_token="revoked", expires_at=time.time() + 3600))
    before = token_calls(gateway)
    reply = Bridge(gateway.url + "/mcp", source).forward(json.dumps(session("x")[0]))
    assert json.loads(reply)["result"]["serverInfo"]["name"] == "xmemo"
    assert token_calls(gateway) - before == 1


def test_mcp_stdio_on_client_credentials(gateway, tmp_path):
    created = gateway.cli("client", "create", "--name", "stdio-agent", "--scope", "memory:read", "--scope", "memory:write")
    client = json.loads(created.stdout)
    env = {**gateway.env, "XMEMO_CONFIG_DIR": str(tmp_path / "none"),
           "XMEMO_CLIENT_ID": client["client_id"], "XMEMO_CLIENT_SECRET": client["client_secret"]}
    answers, err = stdio(env, gateway.url + "/mcp", session("The agent sync"))
    assert "The agent sync is on Friday." in answers[2]["result"]["content"][0]["text"]
    assert client["client_secret"] not in err and "eyJ" not in err


def test_mcp_stdio_without_any_credential(gateway, tmp_path):
    env = {**gateway.env, "XMEMO_CONFIG_DIR": str(tmp_path / "empty")}
    env.pop("XMEMO_TOKEN", None)
    proc = subprocess.run([*xmemo_command(), "mcp-stdio", "--url", gateway.url + "/mcp"], env=env, input="",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "xmemo login --url" in proc.stderr


def test_a_refused_refresh_says_what_to_do(logged_in, gateway, monkeypatch, tmp_path):
    from xmemo import credentials

    monkeypatch.setenv("XMEMO_CONFIG_DIR", logged_in[0]["XMEMO_CONFIG_DIR"])
    login = credentials.load(gateway.url)
    monkeypatch.setenv("XMEMO_CONFIG_DIR", str(tmp_path / "cfg"))
    credentials.save(replace(login, refresh_token="not-a-refresh-token"))
    with pytest.raises(credentials.LoginError, match="xmemo login --url"):
        credentials.fresh_access_token(credentials.load(gateway.url))
