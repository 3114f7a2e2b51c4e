"""`xmemo opensearch init | migrate | reindex`: manage the index behind the alias. All
three are idempotent and read the same `XMEMO_*` settings as the service."""

from __future__ import annotations

import json


def register(sub) -> None:
    parser = sub.add_parser("opensearch", help="manage the OpenSearch index and alias")
    inner = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (
        ("init", "create the current index version and the alias if missing"),
        ("migrate", "move the alias to the current index version: mapping, embedder and dimension (no-op when there)"),
        ("reindex", "rebuild the current version into a fresh index and swap the alias"),
        ("mapping", "print the create-index body (settings, analyzers, mappings) without connecting"),
    ):
        p = inner.add_parser(name, help=text)
        p.add_argument("--url", help="OpenSearch endpoint (default: XMEMO_OPENSEARCH_URL)")
        if name in ("migrate", "reindex"):
            p.add_argument("--slices", type=int, default=1, help="copy in this many disjoint slices, one after the other")
            p.add_argument("--rate", type=float, help="throttle each slice's copy to this many documents a second")
        p.set_defaults(func=run)


def run(args) -> int:
    from ..config import Settings
    from ..embedding import embedder_has_states
    from ..store.opensearch import manage
    from ..store.opensearch.client import make_client
    from ..store.opensearch.store import OpenSearchStore

    settings = Settings(**({"opensearch_url": args.url} if args.url else {}))
    store = OpenSearchStore.from_settings(settings)
    if args.action == "mapping":
        print(json.dumps(store.plan.body(), indent=2, ensure_ascii=False))
        return 0
    store.plan.embed = _lazy_embed(settings)
    store.plan.states = embedder_has_states(settings.embedder)
    store.plan.reindex_slices, store.plan.reindex_rate = getattr(args, "slices", 1), getattr(args, "rate", None)
    client = make_client(settings)
    try:
        result = getattr(manage, args.action)(client, store.plan)
    finally:
        client.close()
    print(json.dumps(result))
    return 0


def _lazy_embed(settings):
    """Passage vectors and token states of the configured embedder, loaded only if a move
    must re-embed or fill in states."""
    loaded = []

    def embed(texts: list[str]):
        from ..config import BedrockSettings
        from ..embedding import make_embedder, passage_embeddings

        if not loaded:
            loaded.append(make_embedder(settings.embedder, settings.embedder_threads, bedrock=settings.part(BedrockSettings)))
        vectors, states = passage_embeddings(loaded[0], texts)
        return vectors.tolist(), states

    return embed
