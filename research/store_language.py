"""Stores of one language: two things tried to help them, neither kept.

In a small store of one language, every memory shares the question's language and
templates, and an everyday question in Chinese or Korean lifts every note of its language
(docs/retrieval-quality.md, Small stores). Two experiments on `xmemo.bench._agent_memories`' stores (seed 40):

- `ranking`: the semantic leg alone (found in the top 3), with memories embedded as e5
  passages (what ships), as queries (e5's prefix for symmetric tasks), and with the store's
  mean vector taken off both sides (centring); also the notes bench's dev half (first relevant).
- `gates`: the best note's evidence minus `alpha` x the store's median evidence, as a gate
  in place of the small-store evidence floor: each `alpha`'s threshold chosen on the fitted
  languages' single-language stores (the most answers kept with off-topic empty >= 0.98),
  then checked on the unfitted languages'. Evidence as `retrieval.evidence` computes it,
  with every memory of the store examined and every other floor off.

    .venv/bin/python -m research.store_language ranking --out bench-out/smallstores/store-language/ranking
    .venv/bin/python -m research.store_language gates --out bench-out/smallstores/store-language/gates
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path

SEED = 40
SIZES = (15, 30, 50)


def _unit(v):
    import numpy as np

    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _store_sets():
    from xmemo.bench import _agent_memories as gen
    from xmemo.bench.smallstores import store_languages

    return {
        "fitted languages, mixed": store_languages(gen.LANGUAGES, 4, monolingual=False),
        "fitted languages, one per store": store_languages(gen.LANGUAGES, 2, monolingual=True),
        "unfitted languages, one per store": store_languages(gen.UNFITTED, 2, monolingual=True),
    }


def ranking(args: argparse.Namespace) -> tuple[str, dict]:
    import numpy as np

    import xmemo.e5.engine as engine
    from xmemo.bench import _agent_memories as gen
    from xmemo.bench import notes as bench
    from xmemo.config import Settings
    from xmemo.embedding import make_embedder

    settings = Settings()
    embedder = make_embedder(settings.embedder, settings.embedder_threads)
    ways = ("passage (shipped)", "query prefix", "centred")

    def memories(texts: list[str]) -> dict:
        """The memories' vectors for each way; centring starts from the shipped ones."""
        shipped = _unit(embedder.embed_passages(texts))
        prefix, engine.PASSAGE = engine.PASSAGE, engine.QUERY
        try:
            as_queries = _unit(embedder.embed_passages(texts))
        finally:
            engine.PASSAGE = prefix
        return {"passage (shipped)": shipped, "query prefix": as_queries, "centred": shipped}

    def top(m, q, way: str, k: int):
        if way == "centred":
            mean = m.mean(0)
            m, q = _unit(m - mean), _unit(q - mean)
        return list(np.argsort(-(m @ q))[:k])

    results: dict[str, dict[str, float]] = {}
    for name, stores in _store_sets().items():
        rng = random.Random(SEED)
        hits = {w: [] for w in ways}
        for size in SIZES:
            for langs in stores:
                pairs = gen.store(rng, size, langs)
                vectors = memories([p.memory for p in pairs])
                for i, p in enumerate(pairs):
                    for question in (p.abbreviated, p.paraphrased):
                        q = _unit(embedder.embed_query(question))
                        for w in ways:
                            hits[w].append(i in top(vectors[w], q, w, 3))
        results[name] = {w: round(float(np.mean(h)), 3) for w, h in hits.items()}
    corpus = bench.load()
    ids = [n.id for n in corpus.notes]
    answerable = [q for q in corpus.questions if q.split == "dev" and q.judgments]
    notes_vectors = memories([n.content for n in corpus.notes])
    first = {w: [] for w in ways}
    for question in answerable:
        q = _unit(embedder.embed_query(question.query))
        for w in ways:
            first[w].append(bool(question.judgments.get(ids[top(notes_vectors[w], q, w, 1)[0]])))
    results["notes bench, dev half: first relevant"] = {w: round(float(np.mean(f)), 3) for w, f in first.items()}
    lines = [
        "# The semantic leg alone, three ways of embedding memories",
        "",
        f"Generated stores of seed {SEED}, sizes {', '.join(map(str, SIZES))} (found in the top 3, both question forms); "
        "the notes bench's dev half (its answerable questions: the first note relevant). Nothing else ranks.",
        "",
        "| stores | " + " | ".join(ways) + " |",
        "|---|" + "---|" * len(ways),
    ]
    lines += [f"| {name} | " + " | ".join(f"{r[w]:.3f}" for w in ways) + " |" for name, r in results.items()]
    return "\n".join(lines), {"seed": SEED, "sizes": SIZES, "results": results}


def _gate_rows(seen: dict[str, list[float]]) -> dict[str, list[dict]]:
    """Every question of the single-language stores (fitted, then unfitted languages), with
    the best and median evidence and the best match the cut saw (`seen`, filled by `gates`)."""
    from xmemo import tools
    from xmemo.auth import principal_from_claims
    from xmemo.bench import _agent_memories as gen
    from xmemo.bench.locomo.abstention import ABSTENTION_OFF
    from xmemo.config import Settings
    from xmemo.embedding import make_embedder
    from xmemo.models import ContextInput, RememberInput
    from xmemo.services import Services
    from xmemo.store.sqlite import SQLiteStore

    settings = Settings()
    embedder = make_embedder(settings.embedder, settings.embedder_threads)
    principal = principal_from_claims({"sub": "research", "scope": f"{settings.resource_server}/memory:read {settings.resource_server}/memory:write"}, settings.resource_server)
    rows: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, stores in list(_store_sets().items())[1:]:
            rng = random.Random(SEED)
            rows[name] = []
            for size in SIZES:
                for n, langs in enumerate(stores):
                    store = SQLiteStore(Path(tmp) / f"{len(rows)}-{size}-{n}.sqlite3", settings.sqlite_busy_timeout_ms, context_weight=settings.context_weight)
                    svc = Services(settings, store, embedder)
                    svc.retrieval = svc.retrieval.model_copy(update={**ABSTENTION_OFF, "evidence_cut": 0.01})  # examine every note
                    pairs = gen.store(rng, size, langs)
                    refs = [tools.remember(svc, principal, RememberInput(content=p.memory)).memory.reference for p in pairs]
                    asked = [(q, ref) for p, ref in zip(pairs, refs) for q in (p.abbreviated, p.paraphrased)]
                    asked += [(q, None) for q in gen.off_topic(rng, 10, langs)]
                    for question, ref in asked:
                        seen.clear()
                        items = tools.recall_context(svc, principal, ContextInput(query=question, max_items=50, max_tokens=8000)).items
                        if not seen.get("evidence"):
                            continue
                        rows[name].append({
                            "off_topic": ref is None, "found": ref is not None and ref in [i.reference for i in items[:3]],
                            "best": max(seen["evidence"]), "median": statistics.median(seen["evidence"]), "match": max(seen.get("match") or [0.0]),
                        })
                    store.close()
    return rows


def gates(args: argparse.Namespace) -> tuple[str, dict]:
    from xmemo.config import Settings
    from xmemo.retrieval import evidence

    seen: dict[str, list[float]] = {}
    shipped_keeps, shipped_match = evidence.keeps, evidence.match

    def keeps(evidences, cut):  # every examined note's evidence, as the cut sees it
        seen["evidence"] = list(evidences)
        return shipped_keeps(evidences, cut)

    def match(covered, late, weight):
        m = shipped_match(covered, late, weight)
        if m is not None:
            seen.setdefault("match", []).append(m)
        return m

    evidence.keeps, evidence.match = keeps, match
    try:
        rows = _gate_rows(seen)
    finally:
        evidence.keeps, evidence.match = shipped_keeps, shipped_match
    settings = Settings()
    fitted, unfitted = rows.values()

    def shares(rs: list[dict], alpha: float, threshold: float) -> tuple[float, float]:
        passes = [r["best"] - alpha * r["median"] >= threshold and r["match"] >= settings.match_floor for r in rs]
        found = [p for r, p in zip(rs, passes) if r["found"]]
        off = [p for r, p in zip(rs, passes) if r["off_topic"]]
        return sum(found) / len(found), 1 - sum(off) / len(off)

    table = []
    for alpha in (0.0, 0.25, 0.5, 0.75, 1.0):
        empty_enough = [c for t in range(0, 200, 2) if (c := (t / 1000, *shares(fitted, alpha, t / 1000)))[2] >= 0.98]
        if not empty_enough:
            continue
        chosen = max(empty_enough, key=lambda c: c[1])
        table.append({"alpha": alpha, "threshold": chosen[0], "fitted": chosen[1:], "unfitted": shares(unfitted, alpha, chosen[0])})
    shipped = {"fitted": shares(fitted, 0.0, settings.small_evidence_floor), "unfitted": shares(unfitted, 0.0, settings.small_evidence_floor)}
    lines = [
        "# The store's median evidence as a chance level for the small-store gate",
        "",
        f"Single-language generated stores of seed {SEED}, sizes {', '.join(map(str, SIZES))}; every note examined, every other floor off; "
        f"the match floor ({settings.match_floor}) kept. `kept` = answers found in the top 3 that pass; `empty` = off-topic questions that do not. "
        "Thresholds chosen on the fitted languages (en, fr, de, ko), then applied to the unfitted ones (es, it, ja, zh).",
        "",
        "| gate | threshold | fitted: kept | fitted: off-topic empty | unfitted: kept | unfitted: off-topic empty |",
        "|---|---|---|---|---|---|",
        f"| best >= small_evidence_floor (shipped) | {settings.small_evidence_floor} | {shipped['fitted'][0]:.3f} | {shipped['fitted'][1]:.3f} | {shipped['unfitted'][0]:.3f} | {shipped['unfitted'][1]:.3f} |",
    ]
    for r in table:
        lines.append(f"| best - {r['alpha']} x median | {r['threshold']} | {r['fitted'][0]:.3f} | {r['fitted'][1]:.3f} | {r['unfitted'][0]:.3f} | {r['unfitted'][1]:.3f} |")
    return "\n".join(lines), {"seed": SEED, "sizes": SIZES, "shipped": shipped, "gates": table, "questions": {k: len(v) for k, v in rows.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m research.store_language", description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=("ranking", "gates"))
    parser.add_argument("--out", type=Path, required=True, help="folder for report.md and report.json")
    args = parser.parse_args(argv)
    text, data = {"ranking": ranking, "gates": gates}[args.experiment](args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text + "\n", encoding="utf-8")
    (args.out / "report.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (args.out / "command.txt").write_text(f".venv/bin/python -m research.store_language {args.experiment} --out {args.out}\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
