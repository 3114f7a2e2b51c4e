"""Where the two stores' tolerant legs part, question by question, on the same conversations.

Usage:
    .venv/bin/python -m xmemo.bench.locomo.storediff --data ../shared/data/locomo/locomo_dev.json \
        [--opensearch-url URL] [--out DIR]

Each conversation is stored through the real `remember` in the embedded store and in the
OpenSearch store (a local osmem-server unless `--opensearch-url`), both lexical-only
(embedder `none`). Then, for everything that could make the stores rank differently
apart from the BM25 formula, it counts the questions or memories where they differ:

- the indexed terms: every memory's `terms` field against the SQLite row it reproduces
  (`records.ranked_terms` of its `stems` and `context` columns), and its `length` (mapping
  v5) against FTS5's own count of the row's tokens (its `docsize` record);
- candidate depth: how many lexical candidates each store returns;
- ties: whether equal scores come newest first in each store's candidates;
- the pipeline: each store's own candidates through `retrieval.fuse` and
  `retrieval.boost_groups` (what `recall` does without an embedder) must give its
  `recall` answer, so nothing after the store depends on which store it is.

- the scores: questions where a memory matching the query gets another score from the
  OpenSearch store (the cluster's own BM25) than
  from the SQLite store (relative difference above 1e-9).

Two swaps split the recall@10 gap into the candidates each store fetches and the order
its scores give them: the OpenSearch store's candidates scored by FTS5 (the SQLite
store's scores of the same memories), and the SQLite store's candidates scored by the
OpenSearch store."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from statistics import fmean
from typing import Any, Sequence

from ...config import RetrievalSettings, Settings
from ...store import records
from ...store.base import Candidates, Hit
from ...store.textindex import _varints
from ...retrieval.fusion import boost_groups, fuse
from ...tools import _read_filter
from .._report import save
from . import data, stores
from .data import Conversation
from .metrics import recall_at_k
from .system import XMemoSystem

ALL_MATCHES = 1000  # more than any LoCoMo conversation's turns: every memory sharing a query term


def ranked(hits: Sequence[Hit], settings: Settings) -> list[str]:
    """The references `recall` returns for these lexical candidates without an embedder."""
    s = settings.part(RetrievalSettings)
    order = boost_groups(fuse(Candidates(lexical=list(hits)), s), s.group_weight)
    return [r.memory.reference for r in order]


def rescored(hits: Sequence[Hit], score: dict[str, float]) -> list[Hit]:
    """`hits` with another store's scores of the same memories (by turn), best first and,
    on equal scores, newest first: how both stores order their candidates."""
    out = [Hit(h.memory, score[h.memory.reference]) for h in hits]
    return sorted(out, key=lambda h: (-h.score, -h.memory.created_at.timestamp()))


def newest_first_on_ties(hits: Sequence[Hit]) -> bool:
    return all(a.score != b.score or a.memory.created_at >= b.memory.created_at for a, b in zip(hits, hits[1:]))


def _indexed(system: XMemoSystem, field: str) -> dict[str, Any]:
    """Turn id → a field of the OpenSearch store's document (read from the cluster)."""
    store = system.store
    body = {"size": 10_000, "query": {"match_all": {}}, "_source": ["reference", field]}
    hits = store.client.search(index=store.alias, body=body)["hits"]["hits"]  # type: ignore[attr-defined]
    return {system.ids[h["_source"]["reference"]][0]: h["_source"].get(field) for h in hits}


def _fts5_lengths(system: XMemoSystem) -> dict[str, int]:
    """Turn id → the tokens FTS5 counted in the memory's row (every column)."""
    rows = system.store._conn.execute(  # type: ignore[attr-defined]
        "SELECT m.reference, d.sz FROM memories m JOIN memories_fts_docsize d ON d.id = m.rowid"
    )
    return {system.ids[r["reference"]][0]: sum(_varints(r["sz"])) for r in rows}


def _sqlite_terms(system: XMemoSystem, weight: float) -> dict[str, str]:
    """Turn id → the row the SQLite store scores, as the `terms` field should hold it."""
    rows = system.store._conn.execute(  # type: ignore[attr-defined]
        "SELECT m.reference, f.stems, f.context FROM memories m JOIN memories_fts f ON f.rowid = m.rowid"
    )
    return {system.ids[r["reference"]][0]: records.ranked_terms(r["stems"], r["context"], weight) for r in rows}


def measure(conversations: Sequence[Conversation], url: str) -> dict[str, Any]:
    settings = Settings(embedder="none")
    made = stores.OpenSearchStores(settings, url, "diff")
    names = ("sqlite", "opensearch")
    counts = {
        "memories": 0, "terms_differ": 0, "length_differs": 0, "depth_differs": 0, "scores_differ": 0,
        "ties_out_of_order": {n: 0 for n in names}, "replay_differs": {n: 0 for n in names},
    }
    recall: dict[str, list[float]] = {k: [] for k in ("sqlite", "opensearch", "opensearch candidates, fts5 scores", "sqlite candidates, opensearch scores")}
    try:
        for number, conv in enumerate(conversations):
            with tempfile.TemporaryDirectory() as tmp:
                systems = {
                    "sqlite": XMemoSystem(settings, None, Path(tmp), owner=f"diff-{number}"),
                    "opensearch": XMemoSystem(settings, None, Path(tmp), owner=f"diff-{number}", store=made(Path(tmp))),
                }
                try:
                    for turn in conv.turns:
                        for system in systems.values():
                            system.remember(turn)
                    want, got = _sqlite_terms(systems["sqlite"], settings.context_weight), _indexed(systems["opensearch"], "terms")
                    counts["memories"] += len(want)
                    counts["terms_differ"] += sum(sorted(v.split()) != sorted((got.get(k) or "").split()) for k, v in want.items())
                    fts5, kept = _fts5_lengths(systems["sqlite"]), _indexed(systems["opensearch"], "length")
                    counts["length_differs"] += sum(n != kept.get(k) for k, n in fts5.items())
                    for q in conv.questions:
                        _question(q, systems, settings, counts, recall)
                finally:
                    for system in systems.values():
                        system.close()
    finally:
        made.close()
    return {"questions": len(recall["sqlite"]), **counts, "recall@10": {k: round(fmean(v), 4) for k, v in recall.items()}}


def _question(q, systems: dict[str, XMemoSystem], settings: Settings, counts: dict[str, Any], recall: dict[str, list[float]]) -> None:
    k = settings.lexical_candidates
    turn_of = {name: (lambda ref, s=s: s.ids[ref][0]) for name, s in systems.items()}
    cands, every = {}, {}
    for name, system in systems.items():
        rf = _read_filter(system.svc, system.principal, object())
        cands[name] = system.store.search(q.text, None, rf, lexical_k=k, semantic_k=0, strict=False).lexical
        every[name] = system.store.search(q.text, None, rf, lexical_k=ALL_MATCHES, semantic_k=0, strict=False).lexical
        counts["ties_out_of_order"][name] += not newest_first_on_ties(cands[name])
        answer = [ids[0] for ids in system.recall(q.text, 20, timed=False) if ids]
        replay = [turn_of[name](r) for r in ranked(cands[name], settings)][:20]
        counts["replay_differs"][name] += replay != answer
        recall[name].append(recall_at_k([[t] for t in answer], q.evidence, 10))
    counts["depth_differs"] += len(cands["sqlite"]) != len(cands["opensearch"])
    # the other store's score of each memory, by turn, then mapped to this store's references
    by_turn = {name: {turn_of[name](h.memory.reference): h.score for h in every[name]} for name in systems}
    counts["scores_differ"] += by_turn["sqlite"].keys() != by_turn["opensearch"].keys() or any(
        abs(s - by_turn["opensearch"][t]) > 1e-9 * abs(s) for t, s in by_turn["sqlite"].items()
    )
    for mine, other, label in (("opensearch", "sqlite", "opensearch candidates, fts5 scores"), ("sqlite", "opensearch", "sqlite candidates, opensearch scores")):
        score = {h.memory.reference: by_turn[other].get(turn_of[mine](h.memory.reference), 0.0) for h in cands[mine]}
        order = [turn_of[mine](r) for r in ranked(rescored(cands[mine], score), settings)]
        recall[label].append(recall_at_k([[t] for t in order], q.evidence, 10))


def markdown(out: dict[str, Any]) -> str:
    r = out["recall@10"]
    lines = [
        f"## Where the two stores' lexical legs part ({out['questions']} questions, {out['memories']} memories, embedder `none`)",
        "",
        "| check | differs |",
        "| --- | --- |",
        f"| memories whose indexed terms differ from the SQLite row | {out['terms_differ']} of {out['memories']} |",
        f"| memories whose `length` differs from FTS5's count of the row | {out['length_differs']} of {out['memories']} |",
        f"| questions with another number of lexical candidates | {out['depth_differs']} |",
        f"| questions where a matching memory's score differs (every match, relative 1e-9) | {out['scores_differ']} |",
        f"| questions whose equal scores are not newest first (sqlite / opensearch) | {out['ties_out_of_order']['sqlite']} / {out['ties_out_of_order']['opensearch']} |",
        f"| questions where fusion + group boost over the store's candidates is not its `recall` (sqlite / opensearch) | {out['replay_differs']['sqlite']} / {out['replay_differs']['opensearch']} |",
        "",
        "| candidates, scores | recall@10 |",
        "| --- | --- |",
        f"| sqlite's, fts5's (the SQLite store's `recall`) | {r['sqlite']:.4f} |",
        f"| opensearch's, fts5's | {r['opensearch candidates, fts5 scores']:.4f} |",
        f"| sqlite's, the OpenSearch store's | {r['sqlite candidates, opensearch scores']:.4f} |",
        f"| opensearch's, the OpenSearch store's (its `recall`) | {r['opensearch']:.4f} |",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--conversations", type=int)
    p.add_argument("--opensearch-url", help="default: start a local osmem-server")
    p.add_argument("--out", type=Path, help="folder for storediff.json and storediff.md")
    args = p.parse_args()
    conversations = data.load(args.data)[: args.conversations]
    with stores.opensearch_at(args.opensearch_url) as (url, label):
        out = {"cluster": label, **measure(conversations, url)}
    text = markdown(out) + f"\nCluster: {out['cluster']}.\n"
    print(text)
    if args.out:
        save(args.out, "storediff", out, text)


if __name__ == "__main__":
    main()
