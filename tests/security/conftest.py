"""Fixtures of the security and reliability tests: a real local gateway (`xmemo.local.spawn`)
with debug logging on, whose log file the secrets test reads, and one on the OpenSearch
store (a clone of the session's osmem-server)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from tests import ROOT
from xmemo.local.spawn import SpawnedGateway, start_gateway

from .cases import COUNTS, FIGURES


@pytest.fixture(scope="session")
def security_gateway(tmp_path_factory) -> SpawnedGateway:
    """One gateway for the isolation, fuzzing and secrets tests: Powertools at DEBUG and the
    access log on, so everything that could ever be logged lands in `gateway.log`."""
    with start_gateway(tmp_path_factory.mktemp("security-gw"), {"POWERTOOLS_LOG_LEVEL": "DEBUG"}, cwd=ROOT, quiet=False) as gw:
        yield gw


@pytest.fixture(scope="session")
def opensearch_gateway(tmp_path_factory, osmem_server) -> SpawnedGateway:
    """The gateway on `XMEMO_STORE=opensearch`, on its own clone of osmem-server (which has
    no k-NN, and the embedder is `none`). `gw.env["XMEMO_OPENSEARCH_URL"]` is the server."""
    clone = osmem_server.clone()
    env = {"XMEMO_STORE": "opensearch", "XMEMO_OPENSEARCH_URL": clone.url, "XMEMO_OPENSEARCH_KNN": "false", "POWERTOOLS_LOG_LEVEL": "ERROR"}
    with start_gateway(tmp_path_factory.mktemp("security-gw-opensearch"), env, cwd=ROOT) as gw:
        yield gw
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
