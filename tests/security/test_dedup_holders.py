"""Regression: a duplicate answer never hands over another holder's memory. An owner whose
`sub` is `ann/project:x` has the boundary string of ann's project `x`; the same content
there must be a new memory of its own, on every store."""

from __future__ import annotations

import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.config import Settings
from xmemo.models import RememberInput
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore


@pytest.fixture(params=["sqlite", pytest.param("opensearch", marks=pytest.mark.integration)])
def svc(request, tmp_path, clock):
    if request.param == "sqlite":
        store = SQLiteStore(tmp_path / "x.sqlite3")
        settings = Settings(data_dir=tmp_path, embedder="none")
    else:
        from xmemo.store.opensearch import OpenSearchStore

        settings = Settings(data_dir=tmp_path, embedder="none", store="opensearch",
                            opensearch_url=request.getfixturevalue("osmem_clone").url, opensearch_knn=False)
        store = OpenSearchStore.from_settings(settings)
    yield Services(settings, store, None, clock)
    store.close()


def test_same_boundary_string_other_holder_is_not_a_duplicate(svc):
    ann = make_principal("ann")
    mimic = make_principal("ann/project:x")
    first = tools.remember(svc, ann, RememberInput(content="ann's launch plan", project="x"))
    second = tools.remember(svc, mimic, RememberInput(content="ann's launch plan"))
    assert not second.duplicate
    assert second.memory.reference != first.memory.reference and second.memory.owner == "ann/project:x"
