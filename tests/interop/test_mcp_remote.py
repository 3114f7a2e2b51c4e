"""`mcp-remote` (npm, pinned in tests/interop/js), the stdio bridge Claude Desktop, Cursor
and Windsurf users run for remote servers, connects to `xmemo serve` on its default path:
dynamic registration, the authorization URL it prints, its own loopback callback listener
receiving the code, then JSON-RPC over its stdio (`initialize`, `tools/list`, a tool call).
Only the person's part is done here: open the URL and sign in on the login form."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.interop.browser import sign_in
from xmemo.local.spawn import start_gateway

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "tests" / "interop" / "js"
USER, PASSWORD = "tess", "tess-interop-password-2"
AUTHORIZE_URL = re.compile(r"^(http://\S+/oauth2/authorize\?\S+)$")


@pytest.fixture
def gateway(tmp_path):
    with start_gateway(tmp_path / "gateway", cwd=ROOT) as gw:
        gw.add_user(USER, PASSWORD, "acme")
        yield gw


def test_mcp_remote_signs_in_through_its_own_callback_and_lists_tools(gateway, tmp_path):
    node = shutil.which("node")
    assert node, "make test installs Debian's nodejs"
    proxy = JS / "node_modules" / "mcp-remote" / "dist" / "proxy.js"
    assert proxy.is_file(), "make test runs npm ci in tests/interop/js"
    env = {**os.environ, "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth"), "BROWSER": "true"}  # no browser to open here
    bridge = subprocess.Popen([node, str(proxy), gateway.url + "/mcp", "--allow-http"], cwd=JS, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    printed: queue.Queue[str] = queue.Queue()
    stderr: list[str] = []

    def read_stderr():
        for line in bridge.stderr:
            stderr.append(line)
            printed.put(line.strip())
    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        url = None
        while url is None:
            try:
                line = printed.get(timeout=60)
            except queue.Empty:
                pytest.fail("mcp-remote printed no authorization URL:\n" + "".join(stderr)[-3000:])
            match = AUTHORIZE_URL.match(line)
            url = match and match.group(1)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        assert query["code_challenge_method"] == ["S256"]
        callback = urllib.parse.urlsplit(query["redirect_uri"][0])
        assert callback.hostname in ("localhost", "127.0.0.1"), query  # a loopback listener of its own
        sign_in(url, USER, PASSWORD)

        def rpc(message: dict) -> dict:
            bridge.stdin.write(json.dumps(message) + "\n")
            bridge.stdin.flush()
            line = bridge.stdout.readline()
            assert line, "".join(stderr)[-3000:]
            return json.loads(line)

        init = rpc({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "interop", "version": "1"}}})
        assert init["result"]["serverInfo"]["name"] == "xmemo", init
        bridge.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        tools = rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert {"remember", "recall", "search_memory", "recall_context"} <= {t["name"] for t in tools["result"]["tools"]}, tools
        called = rpc({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "recall", "arguments": {"query": "a topic that was never saved"}}})
        assert called["result"]["content"][0]["text"] == "No matching XMemo memory was found.", called
    finally:
        bridge.terminate()
        bridge.wait(timeout=30)
