"""`xmemo bench locomo --data FILE [--out DIR] [--store sqlite|opensearch]`: evidence recall
of `recall` and coverage of `recall_context` on LoCoMo, next to BM25 and dense-only
baselines over the same turns, plus the French/Korean check. Retrieval settings come from
`XMEMO_*` like the service's. On `--store opensearch` the lexical-only figures of both
stores are also measured and printed side by side (`parity`)."""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path

from ...config import Settings
from ...retrieval.profile import PROFILE
from . import data, multilingual, stores
from .. import _embedder
from .._report import save
from .report import markdown, plot, systems_dict
from .evaluate import evaluate
from .sweep import Sweep

RETRIEVAL_SETTINGS = PROFILE.settings.names()  # the ranking settings, as the profile lists them


def register(sub) -> None:
    p = sub.add_parser("locomo", help="retrieval quality on LoCoMo vs BM25 and dense baselines")
    p.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file (e.g. locomo_dev.json)")
    p.add_argument("--out", type=Path, help="folder for report.json, report.md and coverage.png")
    _embedder.add_option(p)
    p.add_argument("--conversations", type=int, help="only the first N conversations (quick runs)")
    p.add_argument(
        "--multilingual", type=Path, default=multilingual.DEFAULT_PATH,
        help="French/Korean check file (default: %(default)s; skipped when missing)",
    )
    p.add_argument(
        "--cache", type=Path,
        help="keep passage and query vectors in this folder between runs (quick experiments; latency then excludes query embedding)",
    )
    p.add_argument(
        "--sweep", action="store_true",
        help="also ask every store's questions, foreign questions and nonsense under a grid of relevance floors, "
        "and report the curve and the floors the default-choosing rule picks (slower)",
    )
    p.add_argument(
        "--seeds", type=Path, nargs="+", default=list(multilingual.SEEDS_PATHS),
        help="with --sweep, small stores (one per file) whose questions the chosen floors must still answer "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--captions", action="store_true",
        help="store each shared image's caption with its turn, as LoCoMo's own retrieval evaluation does "
        "(default: the turn's text only, the series docs/retrieval-quality.md reports)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--store", choices=["sqlite", "opensearch"], default="sqlite", help="the store under test (default: sqlite)")
    p.add_argument(
        "--opensearch-url", help="OpenSearch for --store opensearch (default: start a local osmem-server, lexical leg only)"
    )
    p.set_defaults(func=run)


PARITY_METRICS = ("recall@1", "recall@5", "recall@10", "recall@20", "coverage@1500")
PARITY_TARGET = 0.03  # |OpenSearch - SQLite| lexical-only recall@10


def run(args: argparse.Namespace) -> int:
    settings, embedder = _embedder.chosen(args)
    conversations = data.load(args.data, args.captions)[: args.conversations]
    with ExitStack() as stack:
        store = url = None
        label = "sqlite (embedded)"
        if args.store == "opensearch":
            url, label = stack.enter_context(stores.opensearch_at(args.opensearch_url))
            store = stores.OpenSearchStores(settings, url, "main")
            stack.callback(store.close)
        report = measure(args, conversations, settings, embedder, store, label)
        if url is not None:
            report["parity"] = parity(conversations, settings, url, not args.no_progress)
    text = markdown(report)
    print(text)
    if args.out:
        save(args.out, "report", report, text)
        plot(report, args.out / "coverage.png")
        print(f"saved {args.out / 'coverage.png'}")
    return 0


def measure(args, conversations, settings: Settings, embedder, store, label: str) -> dict:
    """The main run on the store under test (`store` makes each conversation's; None: SQLite)."""
    progress = not args.no_progress
    sweep = Sweep() if args.sweep else None
    outcome = evaluate(
        conversations, settings, embedder, progress=progress, label="locomo", cache_dir=args.cache, store=store,
        sweep=sweep,
    )
    if store is not None:
        semantic = store.semantic()
    else:
        semantic = "on" if embedder is not None else "off: no embedder (lexical-only run)"
    report = {
        "questions": outcome.questions,
        "systems": systems_dict(outcome),
        "abstention": outcome.abstention.summary(),
        "profile": PROFILE.identity(settings),
        "settings": {name: getattr(settings, name) for name in RETRIEVAL_SETTINGS},
        "run": {
            "data": str(args.data),
            "captions": args.captions,
            "conversations": len(conversations),
            "turns": outcome.turns,
            **_embedder.described(settings),
            "store": label,
            "semantic": semantic,
            "seconds": round(outcome.seconds, 1),
            "vector_cache": str(args.cache) if args.cache else None,
        },
    }
    if args.multilingual and args.multilingual.exists():
        corpus = multilingual.load(args.multilingual)
        multi = evaluate(
            [corpus], settings, embedder, progress=progress, label="multilingual", cache_dir=args.cache, abstention=False,
            store=store, sweep=sweep,
        )
        report["multilingual"] = {
            "questions": multi.questions,
            "memories": multi.turns,
            "systems": systems_dict(multi),
        }
    elif args.multilingual:
        print(f"multilingual check skipped: {args.multilingual} not found", file=sys.stderr)
    seeds = [multilingual.load(path, "seeds", grouped=False) for path in args.seeds if path.exists()]
    if sweep is not None and seeds:  # the small stores the floors must not fail
        evaluate(seeds, settings, embedder, progress=progress, label="seeds", cache_dir=args.cache, store=store, sweep=sweep)
    if sweep is not None:
        report["sweep"] = sweep.summary()
    return report


def parity(conversations, settings: Settings, url: str, progress: bool) -> dict:
    """The lexical-only figures of both stores on the same conversations (embedder `none`)
    and their difference: the OpenSearch store's lexical leg against the embedded one's."""
    lexical = settings.model_copy(update={"embedder": "none"})
    made = stores.OpenSearchStores(lexical, url, "lexical")
    try:
        hosted = evaluate(conversations, lexical, None, progress=progress, label="opensearch lexical", abstention=False, store=made)
    finally:
        made.close()
    embedded = evaluate(conversations, lexical, None, progress=progress, label="sqlite lexical", abstention=False)
    figures = {name: out.systems["xmemo"].summary() for name, out in (("sqlite", embedded), ("opensearch", hosted))}
    difference = {m: round(figures["opensearch"][m] - figures["sqlite"][m], 4) for m in PARITY_METRICS}
    return {
        "questions": hosted.questions,
        "metrics": {name: {m: round(f[m], 4) for m in PARITY_METRICS} for name, f in figures.items()},
        "difference": difference,
        "target": f"|opensearch - sqlite| recall@10 <= {PARITY_TARGET}",
        "within_target": abs(difference["recall@10"]) <= PARITY_TARGET,
        "seconds": {"opensearch": round(hosted.seconds, 1), "sqlite": round(embedded.seconds, 1)},
    }
