"""The client on the login `xmemo login` stored (refresh token in the config dir), against
the local gateway's authorization server with 6-second access tokens: renewed before
expiry, and once after the server refused an expired one."""

from __future__ import annotations

import re
import subprocess
import time
from urllib.parse import urljoin

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway, xmemo_command
from xmemo.client import AuthenticationError, StoredLogin, XMemo

pytestmark = pytest.mark.e2e
PASSWORD = "client-login-password"
ACCESS_TTL = 6


@pytest.fixture(scope="module")
def login_gateway(tmp_path_factory):
    with start_gateway(tmp_path_factory.mktemp("client-login-gw"), {"XMEMO_OAUTH_ACCESS_TTL_S": str(ACCESS_TTL)}, quiet=False, cwd=ROOT) as gw:
        gw.add_user("gina", PASSWORD, "ops")
        yield gw


@pytest.fixture(scope="module")
def config_dir(login_gateway, tmp_path_factory):
    """`xmemo login --no-browser`, with the person's part (the form, the redirect) over HTTP."""
    config = tmp_path_factory.mktemp("client-config") / "xmemo"
    env = {**login_gateway.env, "XMEMO_CONFIG_DIR": str(config)}
    proc = subprocess.Popen([*xmemo_command(), "login", "--url", login_gateway.url, "--no-browser", "--timeout", "60"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("Open this URL")
    url = proc.stdout.readline().strip()
    with httpx.Client(timeout=30) as web:
        txn = re.search(r'name="txn" value="([^"]+)"', web.get(url).text).group(1)
        sent = web.post(urljoin(url, "/oauth2/authorize"), data={"txn": txn, "username": "gina", "password": PASSWORD})
        assert web.get(sent.headers["location"]).status_code == 200
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return config


@pytest.fixture
def stored(config_dir, monkeypatch):
    monkeypatch.setenv("XMEMO_CONFIG_DIR", str(config_dir))
    for name in ("XMEMO_TOKEN", "XMEMO_CLIENT_ID", "XMEMO_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)


def token_grants(gw) -> int:
    return sum(" /oauth2/token 200 " in line for line in (gw.settings.data_dir / "gateway.log").read_text().splitlines())


def test_no_credentials_at_all_says_how_to_log_in(login_gateway, tmp_path, monkeypatch):
    monkeypatch.setenv("XMEMO_CONFIG_DIR", str(tmp_path / "empty"))
    for name in ("XMEMO_TOKEN", "XMEMO_CLIENT_ID"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AuthenticationError, match="xmemo login"):
        XMemo(login_gateway.url)


def test_the_stored_login_is_used_and_renewed_before_expiry(login_gateway, stored):
    with XMemo(login_gateway.url) as m:
        assert isinstance(m.auth, StoredLogin)
        m.auth.leeway = 1
        before = token_grants(login_gateway)
        assert m.remember("written on a stored login").memory.owner == "gina"
        m.recall("stored login")
        assert token_grants(login_gateway) - before == 1  # cached while fresh
        time.sleep(ACCESS_TTL)
        m.recall("stored login")
        assert m.last_plan.tries == 1  # renewed before sending, never refused
        assert token_grants(login_gateway) - before == 2


def test_an_expired_token_refused_by_the_server_is_renewed_once(login_gateway, stored):
    """The client's clock runs an hour behind: it sends a token the server finds expired
    (401), renews through the refresh token, and the call succeeds."""
    auth = StoredLogin(login_gateway.url, leeway=0, clock=lambda: time.time() - 3600)
    with XMemo(login_gateway.url, auth=auth) as m:
        m.recall("stored login")
        time.sleep(ACCESS_TTL + 1)
        before = token_grants(login_gateway)
        m.recall("stored login")
        assert m.last_plan.tries == 2 and token_grants(login_gateway) - before == 1
