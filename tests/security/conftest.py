"""Fixtures of the security and reliability tests: a real local gateway (tests/gateway.py)
with debug logging on, whose log file the secrets test reads, and one on the OpenSearch
store (a clone of the session's osmem-server)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from tests.gateway import LocalGateway, start_gateway, stop_gateway

from .cases import COUNTS, FIGURES


@pytest.fixture(scope="session")
def security_gateway(tmp_path_factory) -> LocalGateway:
    """One gateway for the isolation, fuzzing and secrets tests: Powertools at DEBUG and the
    access log on, so everything that could ever be logged lands in `gateway.log`."""
    gw = start_gateway(tmp_path_factory.mktemp("security-gw"), {"POWERTOOLS_LOG_LEVEL": "DEBUG"}, quiet=False)
    yield gw
    stop_gateway(gw)


@pytest.fixture(scope="session")
def opensearch_gateway(tmp_path_factory, osmem_server) -> LocalGateway:
    """The gateway on `XMEMO_STORE=opensearch`, on its own clone of osmem-server (which has
    no k-NN, and the embedder is `none`). `gw.env["XMEMO_OPENSEARCH_URL"]` is the server."""
    clone = osmem_server.clone()
    env = {"XMEMO_STORE": "opensearch", "XMEMO_OPENSEARCH_URL": clone.url, "XMEMO_OPENSEARCH_KNN": "false", "POWERTOOLS_LOG_LEVEL": "ERROR"}
    gw = start_gateway(tmp_path_factory.mktemp("security-gw-opensearch"), env)
    yield gw
    stop_gateway(gw)
    clone.close()


def pytest_terminal_summary(terminalreporter) -> None:
    if COUNTS:
        terminalreporter.section("generated cases (security/reliability)")
        for name, n in sorted(COUNTS.items()):
            terminalreporter.write_line(f"{name}: {n}")
        FIGURES.mkdir(parents=True, exist_ok=True)
        saved = FIGURES / "security-cases.json"
        record = {"finished": datetime.now(timezone.utc).isoformat(timespec="seconds"), "cases": dict(sorted(COUNTS.items()))}
        saved.write_text(json.dumps(record, indent=2) + "\n")
        terminalreporter.write_line(f"saved {saved}")
