"""`xmemo bench locomo --store opensearch`: the same questions through the same tools on the
OpenSearch store, at `--opensearch-url` or on a local osmem-server started for the run
(the OpenSearch-compatible test server: BM25 over the same analyzers, no k-NN, so only the
lexical leg runs there and the report says so). Each conversation gets a fresh alias."""

from __future__ import annotations

import itertools
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ...config import Settings
from ...store.opensearch import OpenSearchStore


@contextmanager
def opensearch_at(url: str | None) -> Iterator[tuple[str, str]]:
    """(URL, label) of the cluster: the given one, or a local osmem-server for the run."""
    if url:
        yield url, f"opensearch at {url}"
        return
    from osmem_server import OsmemServer, __version__  # dev dependency (the `bench` extra)

    server = OsmemServer.start(japanese=False)
    try:
        yield server.url, f"opensearch (osmem-server {__version__}, local: no k-NN)"
    finally:
        server.close()


class OpenSearchStores:
    """Makes each conversation's store: a fresh alias (and index) on the cluster; `close`
    deletes them. `semantic()` says whether the k-NN leg ran, and if not, why."""

    def __init__(self, settings: Settings, url: str, name: str):
        self.settings = settings.model_copy(
            update={"store": "opensearch", "opensearch_url": url, "opensearch_deadline_s": 60.0, "opensearch_timeout_s": 30.0}
        )
        self.prefix = f"xmemo-locomo-{name}-{int(time.time())}"
        self.stores: list[OpenSearchStore] = []
        self._numbers = itertools.count()

    def __call__(self, folder: Path) -> OpenSearchStore:
        settings = self.settings.model_copy(update={"opensearch_alias": f"{self.prefix}-{next(self._numbers)}"})
        store = OpenSearchStore.from_settings(settings)
        self.stores.append(store)
        return store

    def semantic(self) -> str:
        if self.settings.embedder == "none":
            return "off: no embedder (lexical-only run)"
        reasons = sorted({s.semantic_off for s in self.stores if s.semantic_off})
        return "on (k-NN)" if not reasons else "off: " + "; ".join(reasons)

    def close(self) -> None:
        from ...store.opensearch.client import make_client
        from ...store.opensearch.manage import alias_targets

        client: Any = make_client(self.settings)
        try:
            for store in self.stores:
                for index in alias_targets(client, store.alias):
                    client.indices.delete(index=index)
        finally:
            client.close()
