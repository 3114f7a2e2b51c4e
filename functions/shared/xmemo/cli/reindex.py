"""`xmemo reindex`: re-embed every memory (vector and token states) with the configured
embedder, so a store made with another embedder (or another model file) opens again.

The embedded store is re-embedded in place, a batch per transaction: each batch replaces
its memories' vectors and records how far the run got in the same transaction, so an
interrupted run keeps every vector it had (old or new, none lost), the store refuses to
open until the run is finished, and the next run goes on after the last batch done. The
memories' records are never written. An OpenSearch index is re-embedded into a new index
version behind the alias (`store.opensearch.manage`), the alias moving only when the copy
is complete; an interrupted copy leaves the alias on the old index, and the next run starts
a fresh copy."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Callable

from ..config import BedrockSettings, Settings
from ..embedding import Embedder, make_embedder, passage_embeddings
from ..errors import InvalidRequest
from ..pin import Pin, current_pin


def reindex_embedded(store, embedder: Embedder, to: Pin, batch: int = 64, progress: Callable[[int], None] | None = None) -> int:
    """Re-embed the SQLite store's memories not yet re-embedded to `to`, `batch` at a time
    (`SQLiteStore.reindex_batch` / `replace_vectors`), then record `to`; how many were
    re-embedded by this run. `progress(n)` is called after each batch is committed."""
    done = 0
    while rows := store.reindex_batch(to, batch):
        vectors, states = passage_embeddings(embedder, [m.content for _, m in rows])
        store.replace_vectors(to, {rowid: (vectors[i], states[i]) for i, (rowid, _) in enumerate(rows)})
        done += len(rows)
        if progress is not None:
            progress(len(rows))
    store.finish_reindex(to)
    return done


class Lines:
    """Progress where no terminal shows a bar (a log, CI): a plain line at most every
    `every` seconds, and one at the end."""

    def __init__(self, total: int, every: float = 5.0):
        self.total, self.done, self.every = total, 0, every
        self._last = time.monotonic()

    def update(self, n: int) -> None:
        self.done += n
        if time.monotonic() - self._last >= self.every or self.done >= self.total:
            self._last = time.monotonic()
            print(f"reindex: {self.done}/{self.total} memories re-embedded", file=sys.stderr, flush=True)


def _embedded(settings: Settings, args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..services import make_store

    to = current_pin(settings.embedder, settings.part(BedrockSettings))
    if not to.vectors:
        raise InvalidRequest("no embedder is configured (XMEMO_EMBEDDER=none): there is nothing to re-embed with")
    store = make_store(settings, reindexing=True)
    embedder = make_embedder(settings.embedder, settings.embedder_threads, bedrock=settings.part(BedrockSettings))
    try:
        total = store.reindex_remaining(to)
        if args.quiet:
            n = reindex_embedded(store, embedder, to, args.batch)
        elif sys.stderr.isatty():
            with tqdm(total=total, unit="mem", desc="reindex", file=sys.stderr) as bar:
                n = reindex_embedded(store, embedder, to, args.batch, bar.update)
        else:
            n = reindex_embedded(store, embedder, to, args.batch, Lines(total).update)
    finally:
        store.close()
    print(f"re-embedded {n} memories with {to.describe()}", file=sys.stderr)
    return 0


def _opensearch(settings: Settings) -> int:
    from ..embedding import embedder_has_states
    from ..store.opensearch import manage
    from ..store.opensearch.client import make_client
    from ..store.opensearch.store import OpenSearchStore
    from .opensearch import _lazy_embed

    store = OpenSearchStore.from_settings(settings)
    store.plan.embed = _lazy_embed(settings)
    store.plan.states = embedder_has_states(settings.embedder)
    client = make_client(settings)
    try:
        result = manage.re_embed(client, store.plan)
    finally:
        client.close()
    print(json.dumps(result))
    return 0


def _run(args: argparse.Namespace) -> int:
    settings = Settings()
    return _embedded(settings, args) if settings.store == "sqlite" else _opensearch(settings)


def register(sub) -> None:
    p = sub.add_parser("reindex", help="re-embed every memory with the configured embedder (resumable)")
    p.add_argument("--batch", type=int, default=64, help="memories per transaction (embedded store)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=_run)
