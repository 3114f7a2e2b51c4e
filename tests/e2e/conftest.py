"""Fixtures of the e2e tests: one real local gateway per session (`xmemo.local.spawn`)."""

from __future__ import annotations

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway


@pytest.fixture(scope="session")
def gateway(tmp_path_factory):
    with start_gateway(tmp_path_factory.mktemp("gateway"), cwd=ROOT) as gw:
        yield gw


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        yield client
