"""Fixtures of the client tests: real local gateways (xmemo.local.spawn) over real HTTP,
with real signed tokens, and a fault proxy in front of one when a test needs 503s."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.faultproxy import FaultProxy
from tests import ROOT
from xmemo.local.spawn import SpawnedGateway, start_gateway

BUSY_MS = 250


@pytest.fixture(scope="session")
def gateway(tmp_path_factory) -> SpawnedGateway:
    gw = start_gateway(tmp_path_factory.mktemp("client-gw"), {"POWERTOOLS_LOG_LEVEL": "ERROR"}, cwd=ROOT)
    yield gw
    gw.stop()


@pytest.fixture(scope="session")
def strict_gateway(tmp_path_factory) -> SpawnedGateway:
    """A deployment that refuses secrets (422 capture_policy) and waits only 250 ms for
    the SQLite lock (503 store_unavailable when another process holds it)."""
    env = {"XMEMO_CAPTURE_POLICY": "reject", "XMEMO_SQLITE_BUSY_TIMEOUT_MS": str(BUSY_MS), "POWERTOOLS_LOG_LEVEL": "ERROR"}
    gw = start_gateway(tmp_path_factory.mktemp("client-gw-strict"), env, cwd=ROOT)
    yield gw
    gw.stop()


@pytest.fixture
def proxy(gateway):
    """A proxy in front of the gateway that refuses or stalls on command."""
    p = FaultProxy(gateway.url)
    yield p
    p.drain()
    p.close()


@pytest.fixture
def user() -> str:
    """A subject of its own per test, so counts are not disturbed by other tests."""
    return f"u-{uuid.uuid4().hex[:12]}"


def app_client(gw: SpawnedGateway, *scopes: str, teams=()) -> tuple[str, str]:
    """A registered app client (`xmemo client create`): its id and secret."""
    args = ["client", "create", "--name", f"c-{uuid.uuid4().hex[:8]}"]
    for s in scopes or ("memory:read", "memory:write"):
        args += ["--scope", s]
    for t in teams:
        args += ["--team", t]
    done = gw.cli(*args)
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    return created["client_id"], created["client_secret"]
