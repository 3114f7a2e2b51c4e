"""Wiring: SigV4 signing for `es` and `aoss`, basic auth, and `build_services` from the
environment producing a working OpenSearch store (what `make run` relies on)."""

from __future__ import annotations

import pytest
from botocore.credentials import Credentials

from xmemo import tools
from xmemo.auth import principal_from_claims
from xmemo.config import Settings
from xmemo.models import RecallInput, RememberInput
from xmemo.services import build_services
from xmemo.store.opensearch.client import make_client
from xmemo.store.opensearch.store import OpenSearchStore

pytestmark = pytest.mark.integration
CREDS = Credentials("AKIDEXAMPLE", "secret", "session-token")


@pytest.mark.parametrize("service", ["es", "aoss"])
def test_sigv4_signs_every_request_for_the_configured_service(proxy, service):
    settings = Settings(store="opensearch", opensearch_url=proxy.url, opensearch_auth="sigv4",
                        opensearch_service=service, opensearch_region="eu-west-1", opensearch_knn=False, embedder="none")
    store = OpenSearchStore(settings, client=make_client(settings, CREDS))
    assert store.count() == 0
    auth = [h.get("Authorization", "") for _, _, h in proxy.seen]
    assert auth and all(a.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") for a in auth)
    assert all(f"/eu-west-1/{service}/aws4_request" in a for a in auth)
    assert all(h.get("X-Amz-Security-Token") == "session-token" for _, _, h in proxy.seen)


def test_basic_auth_header_and_no_password_in_repr(proxy):
    settings = Settings(opensearch_url=proxy.url, opensearch_auth="basic", opensearch_username="xm", opensearch_password="s3cret")
    make_client(settings).info()
    headers = {k.lower(): v for k, v in proxy.seen[-1][2].items()}
    assert headers["authorization"] == "Basic eG06czNjcmV0"
    assert "s3cret" not in repr(settings)


def test_build_services_from_the_environment_serves_read_after_write_and_isolation(osmem_clone, monkeypatch, tmp_path):
    monkeypatch.setenv("XMEMO_STORE", "opensearch")
    monkeypatch.setenv("XMEMO_OPENSEARCH_URL", osmem_clone.url)
    monkeypatch.setenv("XMEMO_OPENSEARCH_KNN", "false")
    monkeypatch.setenv("XMEMO_EMBEDDER", "none")
    monkeypatch.setenv("XMEMO_DATA_DIR", str(tmp_path))
    svc = build_services()
    assert isinstance(svc.store, OpenSearchStore)
    alice = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:read xmemo/memory:write"})
    bob = principal_from_claims({"sub": "bob", "scope": "xmemo/memory:read xmemo/memory:write"})
    ref = tools.remember(svc, alice, RememberInput(content="Billing runs on Postgres 16")).memory.reference
    assert [h.reference for h in tools.recall(svc, alice, RecallInput(query="billing postgres")).results] == [ref]
    assert tools.recall(svc, bob, RecallInput(query="billing postgres")).results == []
    svc.store.close()
