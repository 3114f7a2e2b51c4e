"""`xmemo states`: compute the token states (`xmemo.retrieval.late`) of memories the embedded store
kept before it stored them, so `recall`'s late-interaction leg scores them too.
(`xmemo opensearch migrate` does the same for an OpenSearch index.)"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from ..embedding import passage_embeddings
from ..errors import InvalidRequest
from ..services import Services, build_services


def fill_states(svc: Services, batch: int = 64, progress: Callable[[int], None] | None = None) -> int:
    """Embed, a batch at a time, the memories with a vector and no states; how many got
    states. Each batch is one transaction, so an interrupted run loses nothing and the
    next one goes on where it stopped."""
    store = svc.store
    if not hasattr(store, "without_states"):
        raise InvalidRequest("only the embedded store is filled here; run `xmemo opensearch migrate` for OpenSearch")
    if svc.embedder is None:
        raise InvalidRequest("no embedder is configured (XMEMO_EMBEDDER=none): there are no states to compute")
    done = 0
    while memories := store.without_states(batch):
        _, states = passage_embeddings(svc.embedder, [m.content for m in memories])
        added = store.add_states({m.reference: s for m, s in zip(memories, states) if s is not None})
        if added == 0:  # this embedder gives no states (Bedrock): nothing more will change
            break
        done += added
        if progress is not None:
            progress(added)
    return done


def _run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    svc = build_services()
    with tqdm(unit="mem", desc="states", file=sys.stderr, disable=args.quiet) as bar:
        n = fill_states(svc, args.batch, bar.update)
    print(f"computed the token states of {n} memories", file=sys.stderr)
    return 0


def register(sub) -> None:
    p = sub.add_parser("states", help="compute token states for memories stored before they were kept (embedded store)")
    p.add_argument("--batch", type=int, default=64, help="memories per transaction")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)
