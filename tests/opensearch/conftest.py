"""The fault-injecting proxy (tests/faultproxy.py) in front of a fresh osmem-server clone."""

from __future__ import annotations

import pytest

from tests.faultproxy import FaultProxy


@pytest.fixture
def proxy(osmem_clone):
    p = FaultProxy(osmem_clone.url)
    yield p
    p.close()
