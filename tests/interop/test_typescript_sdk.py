"""The official TypeScript MCP SDK (npm `@modelcontextprotocol/sdk`, pinned in
tests/interop/js/package.json and installed by `make test`) connects to `xmemo serve` on its
default path: its own example provider (no `state()`), dynamic registration with the
example's `client_secret_post` (and as a public client), login, `listTools`, `remember`
then `recall`, and an expired access token refreshed without a second login. A client that
is missing or fails its flow fails here; nothing is skipped."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from xmemo.local.spawn import start_gateway

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "tests" / "interop" / "js"
ACCESS_TTL_S = 3  # the gateway's access tokens expire inside the flow, which must refresh
USER, PASSWORD = "tess", "tess-interop-password-1"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    with start_gateway(tmp_path_factory.mktemp("ts-sdk"), {"XMEMO_OAUTH_ACCESS_TTL_S": str(ACCESS_TTL_S)}, cwd=ROOT) as gw:
        gw.add_user(USER, PASSWORD, "acme")
        yield gw


def run_flow(gateway, method: str) -> dict[str, dict]:
    node = shutil.which("node")
    assert node, "make test installs Debian's nodejs"
    assert (JS / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(), "make test runs npm ci in tests/interop/js"
    done = subprocess.run([node, "ts_sdk_flow.mjs", gateway.url + "/mcp", USER, PASSWORD, method, str(ACCESS_TTL_S + 1)],
                          cwd=JS, capture_output=True, text=True, timeout=120)
    steps = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            steps[entry.pop("step")] = entry
    assert done.returncode == 0 and "failed" not in steps, (steps, done.stderr[-3000:], gateway.log()[-3000:])
    return steps


@pytest.mark.parametrize("method", ["client_secret_post", "none"])
def test_the_typescript_sdk_connects_with_its_example_provider(gateway, method):
    steps = run_flow(gateway, method)
    assert steps["authorize"] == {"has_state": False, "code_challenge_method": "S256"}
    assert steps["registered"] == {"method": method, "has_secret": method != "none"}
    assert {"remember", "recall", "search_memory", "recall_context"} <= set(steps["tools"]["names"])
    assert steps["remember"]["text"].startswith("Stored: Reference: mem_") and not steps["remember"]["is_error"]
    recall = steps["recall"]
    assert not recall["is_error"] and "The interop suite runs the TypeScript SDK" in recall["text"], recall
    # the access token expired between the two calls: refreshed (and the refresh token
    # rotated) by the SDK on its own, with no second sign-in
    assert (recall["new_access_token"], recall["rotated_refresh_token"], recall["sign_ins"]) == (True, True, 1), recall
