"""Concurrent requests of different callers through one gateway process never trade
identities or bodies (regression: Powertools keeps the current event process-wide, so
two handler invocations at once read each other's claims)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway

from . import cases

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def forked_gateway(tmp_path_factory):
    """The gateway with two worker processes on one fresh SQLite file: their first calls
    also race to create it (a CI failure once: the loser of the WAL switch answered 500)."""
    gw = start_gateway(tmp_path_factory.mktemp("forked-gw"), {"XMEMO_GATEWAY_WORKERS": "2"}, cwd=ROOT)
    yield gw
    gw.stop()
    assert gw.process.returncode == 0, "the parent stops its workers and exits cleanly"


@pytest.fixture(params=["one process", "two workers"])
def gateway(request):
    return request.getfixturevalue("security_gateway" if request.param == "one process" else "forked_gateway")


def test_concurrent_callers_keep_their_own_identity_and_body(gateway):
    gw = gateway
    owners = [f"conc{uuid.uuid4().hex[:6]}{i}" for i in range(4)]
    tokens = {o: gw.token(o, "memory:read", "memory:write") for o in owners}

    def client(n: int) -> list[str]:
        owner = owners[n % len(owners)]
        problems = []
        with httpx.Client(base_url=gw.url, headers={"Authorization": f"Bearer {tokens[owner]}"}, timeout=60) as http:
            for i in range(40):
                content = f"{owner} client {n} writes note {i}"
                r = http.post("/v1/memories", json={"content": content})
                m = r.json().get("memory", {})
                if r.status_code != 201 or m.get("owner") != owner or m.get("content") != content:
                    problems.append(f"write {r.status_code} {r.text[:200]}")
                r = http.get("/v1/memories", params={"limit": 5})
                if r.status_code != 200 or any(x["owner"] != owner for x in r.json()["memories"]):
                    problems.append(f"list {r.status_code} {r.text[:200]}")
                cases.record("concurrency[identity]", 2)
        return problems

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(client, range(8)))
    problems = [p for r in results for p in r]
    assert not problems, f"{len(problems)} crossed answers, e.g. {problems[:3]}; the gateway logged: {gw.logged_errors()[:3]}"
