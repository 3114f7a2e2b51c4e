"""`sam local start-api` answers a request on every route of template.yaml, each from its
function in a Lambda container. SAM CLI runs Lambda authorizers only: the Cognito authorizer
is skipped, so an authorized route's handler gets no claims and refuses (401) by itself; the
local gateway (`xmemo serve`) stays the way to test authorization."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests import ROOT
from tests.event_checks import check_console_page, check_oauth_unconfigured
from tests.samcli import SAM, TEMPLATE, sam_env
from xmemo.local.template import routes_of

from .conftest import ISSUER, JOBS, LEXICAL, local_template, store, store_env

pytestmark = pytest.mark.sam_local
PATH_VALUES = {"reference": "mem_01JEXAMPLE0000000000000000", "asset": "app.js"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(method: str, url: str) -> tuple[int, dict, str]:
    data = b"{}" if method == "POST" else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


@pytest.fixture
def api_url(sam, tmp_path):
    with store() as url:
        env_file = tmp_path / "env.json"
        env_file.write_text(json.dumps({"Parameters": store_env(url)}))
        port = free_port()
        log = (tmp_path / "start-api.log").open("w")
        server = subprocess.Popen(
            [str(SAM), "local", "start-api", "-t", str(local_template(sam.built, LEXICAL)), "--host", "127.0.0.1", "--port", str(port),
             "--env-vars", str(env_file), "--skip-pull-image", "--warm-containers", "LAZY",
             "--parameter-overrides", " ".join(f"{k}={v}" for k, v in LEXICAL.items())],
            cwd=ROOT, env=sam_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "start-api.log").read_text()[-3000:]
            time.sleep(1)
        yield f"http://127.0.0.1:{port}"
        server.terminate()  # SAM CLI stops its warm containers on SIGTERM
        server.wait(timeout=120)
        log.close()


def check_route(api_url: str, route) -> None:
    path = route.resource
    for name, value in PATH_VALUES.items():
        path = path.replace("{" + name + "}", value)
    status, headers, body = request(route.method, api_url + path)
    if route.function == "McpFunction" and route.method != "POST" and route.authorized:
        assert status == 405, (route, body)  # the transport refuses GET/DELETE before anything else
    elif route.authorized:
        assert (status, json.loads(body)["error"]["code"]) == (401, "unauthorized"), (route, body)
    elif route.function == "McpFunction" and route.method == "OPTIONS":  # a browser client's CORS preflight
        allowed = {k.lower(): v for k, v in headers.items()}.get("access-control-allow-origin")
        assert (status, allowed) == (204, "*"), (route, status, headers)
    elif route.function == "McpFunction":
        assert status == 200 and json.loads(body)["authorization_servers"] == [ISSUER], (route, body)
    elif route.function == "OAuthFunction":
        check_oauth_unconfigured(status, body)  # no PublicBaseUrl: the MCP authorization server is off
    elif route.resource == "/console":
        check_console_page(status, body, headers)
    else:
        assert status == 200 and headers["Content-Type"].startswith("text/javascript"), (route, status)


def test_every_route_answers_from_its_function(api_url):
    """Each function's routes in turn (its first request pays its cold start), JOBS
    functions at a time: one warm container per function, never two."""
    by_function: dict[str, list] = {}
    for route in routes_of(TEMPLATE):
        by_function.setdefault(route.function, []).append(route)
    with ThreadPoolExecutor(JOBS) as pool:
        for done in [pool.submit(lambda routes: [check_route(api_url, r) for r in routes], routes) for routes in by_function.values()]:
            done.result()
