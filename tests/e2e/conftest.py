"""Fixtures of the e2e tests: one real local gateway per session (helpers in tests/gateway.py)."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway import ROOT, XMEMO, LocalGateway, free_port, start_gateway, stop_gateway  # noqa: F401 - re-exported


@pytest.fixture(scope="session")
def gateway(tmp_path_factory):
    gw = start_gateway(tmp_path_factory.mktemp("gateway"))
    yield gw
    stop_gateway(gw)


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        yield client
