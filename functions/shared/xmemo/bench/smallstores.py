"""`xmemo bench smallstores [--out DIR]`: a new user's first day, measured. Stores of 1 to
50 generated agent-style memories (`_agent_memories`: decisions, preferences, procedures
in English, French, German and Korean), each memory asked an abbreviated and a
paraphrased question through the real `recall`: the share found in the top 3; and
off-topic questions and random letters asked of every store: the share answered with
nothing (SPEC §5: that share must be 1). The same with the relevance floors and the evidence
gates switched off shows what abstention costs. `--languages` takes others than the four
the gates were fitted on (`_agent_memories.UNFITTED`), and `--monolingual` gives each store
one language, as a new user's store usually has. `--locomo FILE` builds the stores of a
LoCoMo-format file's turns instead (`_locomo_stores`: text and questions nobody here wrote),
asking each its own conversation's questions and the other conversations'. SQLite store;
the embedder `--embedder` chooses (default XMEMO_EMBEDDER)."""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from .. import tools
from ..auth import principal_from_claims
from ..config import Settings
from ..models import RecallInput, RememberInput
from ..retrieval.profile import PROFILE
from ..services import Services
from ..store.sqlite import SQLiteStore
from . import _agent_memories as gen
from . import _embedder
from . import _locomo_stores
from ._report import cell, markdown_table, save
from .locomo.abstention import ABSTENTION_OFF, nonsense_queries

SIZES = (1, 5, 15, 30, 50)
TOP = 3


def register(sub) -> None:
    p = sub.add_parser("smallstores", help="small generated stores: short questions found, off-topic and nonsense empty")
    p.add_argument("--out", type=Path, help="folder for report.json and report.md")
    p.add_argument("--seed", type=int, default=40, help="generator seed (default: %(default)s)")
    p.add_argument("--stores", type=int, default=4, help="stores per size (default: %(default)s)")
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="store sizes (default: %(default)s)")
    p.add_argument("--unanswerable", type=int, default=10, help="off-topic and random-letter queries per store, each")
    p.add_argument("--languages", nargs="+", choices=gen.LANGUAGES + gen.UNFITTED, default=list(gen.LANGUAGES),
                   help=f"languages of the memories and questions (default: %(default)s, the ones the floors were fitted on; "
                        f"{' '.join(gen.UNFITTED)} never were)")
    p.add_argument("--monolingual", action="store_true", help="each store in one language (--stores per size and language) instead of mixed")
    _embedder.add_option(p)
    p.add_argument("--locomo", type=Path, metavar="FILE",
                   help="build the stores of this LoCoMo-format file's turns instead of generated memories "
                        "(e.g. ../shared/data/locomo/locomo_dev.json; --languages and --monolingual do not apply)")
    p.set_defaults(func=run)


def generated(rng: random.Random, size: int, languages: tuple[str, ...], unanswerable: int) -> tuple[list[gen.Pair], dict[str, list[str]]]:
    """One generated store (`_agent_memories`) and its off-topic questions."""
    return gen.store(rng, size, languages), {"off_topic": gen.off_topic(rng, unanswerable, languages)}


def measure(settings: Settings, embedder, seed: int, sizes, stores: int, unanswerable: int, floors: dict | None = None,
            languages: tuple[str, ...] = gen.LANGUAGES, monolingual: bool = False, locomo: Path | None = None) -> dict:
    """Found@3 and empty shares over freshly built stores (one SQLite file each): `stores`
    per size mixing `languages`, or, `monolingual`, `stores` per size and language; or,
    with `locomo`, `stores` per size of that file's turns (`_locomo_stores`), which the
    misses and leaks name by their ids, not their text."""
    rng = random.Random(seed)
    build, cites = generated, {}
    if locomo is not None:
        source = _locomo_stores.LocomoStores(locomo)
        languages, monolingual, cites = ("en",), False, source.cites

        def build(rng: random.Random, size: int, _languages: tuple[str, ...], unanswerable: int):
            return source.store(rng, size, unanswerable)
    found: dict[str, list[int]] = defaultdict(list)
    answers: dict[str, list[tuple[bool, int]]] = defaultdict(list)  # (answer returned, memories returned) by `recall`'s default limit
    misses: list[dict] = []
    empty: dict[str, list[int]] = {}
    leaks: list[dict] = []
    principal = principal_from_claims({"sub": "first-day", "scope": f"{settings.resource_server}/memory:read {settings.resource_server}/memory:write"}, settings.resource_server)
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            for n, langs in enumerate(store_languages(languages, stores, monolingual)):
                store = SQLiteStore(Path(tmp) / f"s{size}-{n}.sqlite3", settings.sqlite_busy_timeout_ms, context_weight=settings.context_weight)
                svc = Services(settings, store, embedder)
                svc.retrieval = svc.retrieval.model_copy(update=floors or {})
                try:
                    pairs, unasked = build(rng, size, langs, unanswerable)
                    refs = [tools.remember(svc, principal, RememberInput(content=p.memory)).memory.reference for p in pairs]
                    stored_cites = {ref: cites.get(p.memory, p.memory) for p, ref in zip(pairs, refs)}
                    for p, ref in zip(pairs, refs):
                        for form, question in p.questions:
                            hits = [h.reference for h in tools.recall(svc, principal, RecallInput(query=question, limit=TOP)).results]
                            hit = int(ref in hits)
                            returned = [h.reference for h in tools.recall(svc, principal, RecallInput(query=question)).results]
                            for key in ("all", f"size {size}", f"lang {p.language}", f"kind {p.kind}", f"form {form}"):
                                found[key].append(hit)
                                answers[key].append((ref in returned, len(returned)))
                            if not hit:
                                misses.append({"size": size, "question": cites.get(question, question), "memory": cites.get(p.memory, p.memory)})
                    for kind, queries in (*unasked.items(), ("random_letters", nonsense_queries(rng, unanswerable))):
                        for q in queries:
                            results = tools.recall(svc, principal, RecallInput(query=q)).results
                            for key in (kind, *([f"{kind} {langs[0]}"] if kind == "off_topic" and len(langs) == 1 else [])):
                                counts = empty.setdefault(key, [0, 0])
                                counts[0] += 1
                                counts[1] += not results
                            if results:
                                came_back = [stored_cites[r.reference] if cites else r.content for r in results[:3]]
                                leaks.append({"size": size, "kind": kind, "query": cites.get(q, q), "returned": came_back})
                finally:
                    store.close()
    return {
        "found_at_3": {k: {"questions": len(v), "share": round(sum(v) / len(v), 4), **precision(answers[k])} for k, v in found.items()},
        "empty": {k: {"queries": a, "share": round(e / a, 4) if a else 0.0} for k, (a, e) in empty.items()},
        "misses": misses,
        "leaks": leaks,
    }


def precision(answers: list[tuple[bool, int]]) -> dict[str, float | None]:
    """What `recall` returns at its default limit: the share of it that is the answer (the
    mean over the questions that got something, as the notes bench counts precision) and
    how many memories it returns (over every question)."""
    returned = [int(found) / n for found, n in answers if n]
    return {"precision": round(sum(returned) / len(returned), 4) if returned else None,
            "items": round(sum(n for _, n in answers) / len(answers), 3) if answers else 0.0}


def store_languages(languages: tuple[str, ...], stores: int, monolingual: bool) -> list[tuple[str, ...]]:
    """The languages of each store of one size: `stores` mixing all of `languages`, or,
    `monolingual`, `stores` for each language alone."""
    return [(lang,) for lang in languages for _ in range(stores)] if monolingual else [languages] * stores


def markdown(report: dict) -> str:
    run = report["run"]
    if run.get("locomo"):
        parts = [f"Stores of the turns of `{run['locomo']}` (one conversation each, stored as notes); each asked its own "
                 "conversation's questions answered by one of its turns, and other conversations' questions.\n"]
    else:
        stores = "one language per store" if run.get("monolingual") else "languages mixed in each store"
        unfitted = run.get("unfitted") or []
        parts = [f"Languages: {' '.join(run['languages'])} ({stores}); "
                 + (f"never fitted on: {' '.join(unfitted)}.\n" if unfitted else "the ones the floors and gates were fitted on.\n")]
    if warning := _embedder.caveat(run, "`floors_off`"):
        parts.append(warning + "\n")
    for name in ("default", "floors_off"):
        r = report[name]
        rows = [[k, v["questions"], f"{v['share']:.3f}", cell(v.get("precision")), cell(v.get("items"))]
                for k, v in sorted(r["found_at_3"].items(), key=_slice_order)]
        parts.append(f"### {name}: memory found in the top {TOP}; what `recall` returns at its default limit\n\n"
                     + markdown_table(["slice", "questions", "found@3", "precision", "items"], rows))
        rows = [[k, v["queries"], f"{v['share']:.3f}"] for k, v in r["empty"].items()]
        parts.append(f"### {name}: answered with nothing\n\n" + markdown_table(["queries", "asked", "empty share"], rows))
    return "\n".join(parts)


def _slice_order(item: tuple[str, dict]) -> tuple:
    """'all' first, then sizes in order, then languages, kinds and forms."""
    group, _, value = item[0].partition(" ")
    return (["all", "size", "lang", "kind", "form"].index(group), int(value) if value.isdigit() else 0, value)


def run(args: argparse.Namespace) -> int:
    if args.locomo is not None and not args.locomo.is_file():
        print(f"xmemo bench smallstores: no LoCoMo file at {args.locomo}", file=sys.stderr)
        return 2
    settings, embedder = _embedder.chosen(args)
    t0 = time.perf_counter()
    common = dict(seed=args.seed, sizes=args.sizes, stores=args.stores, unanswerable=args.unanswerable,
                  languages=tuple(args.languages), monolingual=args.monolingual, locomo=args.locomo)
    described = {"languages": list(args.languages), "unfitted": [lang for lang in args.languages if lang in gen.UNFITTED]}
    if args.locomo:
        described = {"languages": ["en"], "monolingual": False, "locomo": str(args.locomo)}
    report = {
        "run": {**common, **described, **_embedder.described(settings), "store": "sqlite", "profile": PROFILE.identity(settings)},
        "default": measure(settings, embedder, **common),
        "floors_off": measure(settings, embedder, **common, floors=ABSTENTION_OFF),
    }
    report["run"]["seconds"] = round(time.perf_counter() - t0, 1)
    text = markdown(report)
    print(text)
    save(args.out, "report", report, text)
    return 0
