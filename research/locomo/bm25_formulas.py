"""Where the two stores' lexical rankings part: the same indexed terms scored by the
BM25 formulas of SQLite FTS5, Lucene and osmem-server, outside any store, so a parity gap
can be traced to a formula.

Usage:
    .venv/bin/python -m research bm25-formulas --data ../shared/data/locomo/locomo_dev.json

Each conversation is stored through the real `remember` in the embedded store; every
memory's terms and neighbouring-context terms are read back from its full-text table
(the OpenSearch store indexes the very same strings, `records.terms_text`), and each
question's terms are `text.query_terms` (what both stores send). Every memory holding a
query term is then scored as:

- fts5: SQLite FTS5's `bm25()` over the (words, stems, context) row, weights 1, 1 and
  `context_weight`, one length for the whole row (checked against the store's own
  lexical leg: the `agree` figure);
- lucene two fields: OpenSearch's BM25 (Lucene 8+) summed over a `stems` field and a
  `context^context_weight` field (`most_fields`), as mapping v3 first tried it;
- lucene: OpenSearch's BM25 over the one `terms` field of mapping v3
  (`records.ranked_terms`), one-byte length norms, IDF `ln(1 + (N - n + 0.5) / (n + 0.5))`;
- lucene k1 2.4: the same with `k1` twice 1.2 (a `similarity` setting on the field): the
  field holds the memory's terms twice, so a count of 2 saturates as FTS5's count of 1
  does (`f / (f + 2 k1 n)` = `(f/2) / (f/2 + k1 n)`);
- fts5 on lucene: FTS5's formula itself over the field's statistics (what a `scripted`
  similarity could compute: the count halved, FTS5's clamped IDF, Lucene's one-byte length);
- osmem: the same `terms` field as osmem-server 0.1.6 (bleve 2.6.1) scores it: term
  frequency `sqrt(tf)`, and as average length the field's distinct terms per document
  plus one instead of its mean length (`tests/opensearch/test_lexical_parity.py` pins
  both on the server).

It prints recall@1/10/20 of the lexical leg alone (no fusion, no floors) per formula."""

from __future__ import annotations

import argparse
import math
import tempfile
from collections import Counter
from pathlib import Path
from statistics import fmean
from typing import Any, Sequence

from xmemo import text
from xmemo.config import Settings
from xmemo.store import records
from xmemo.tools import _read_filter
from xmemo.bench.locomo import data
from xmemo.bench.locomo.data import Conversation
from xmemo.bench.locomo.metrics import recall_at_k
from xmemo.bench.locomo.system import XMemoSystem

K1, B = 1.2, 0.75


def lucene_length(n: int) -> int:
    """A field length as Lucene's one-byte norm keeps it (`SmallFloat.intToByte4` then
    `byte4ToInt`): exact below 24, then four significant bits."""
    if n < 24:
        return n
    i = n - 24
    bits = i.bit_length()
    if bits >= 4:
        shift = bits - 4
        i = ((i >> shift) & 0x07 | 0x08) << shift
    return 24 + i


class Field:
    """One analysed field over a store's documents: per-document term counts and lengths."""

    def __init__(self, docs: list[str]):
        self.tf = [Counter(d.split()) for d in docs]
        self.length = [len(d.split()) for d in docs]
        self.df = Counter(t for c in self.tf for t in c)
        present = [n for n in self.length if n]
        self.docs = len(present)
        self.mean = sum(present) / len(present) if present else 1.0
        self.total = len(docs)  # bleve counts every document of the index, with the field or not
        self.osmem_avg = float(len(self.df) // max(self.total, 1) + 1)

    def lucene(self, term: str, i: int, k1: float = K1) -> float:
        f = self.tf[i].get(term, 0)
        if not f:
            return 0.0
        idf = math.log(1 + (self.docs - self.df[term] + 0.5) / (self.df[term] + 0.5))
        return idf * f / (f + k1 * (1 - B + B * lucene_length(self.length[i]) / self.mean))

    def fts5_on_lucene(self, term: str, i: int, copies: int) -> float:
        """FTS5's `bm25()` of the row over this one field, as a `scripted` similarity could
        compute it on Lucene's statistics: the count divided by the memory's copies, FTS5's
        IDF (clamped where a term is in most rows) and Lucene's one-byte length."""
        f = self.tf[i].get(term, 0) / copies
        if not f:
            return 0.0
        idf = math.log((self.docs - self.df[term] + 0.5) / (self.df[term] + 0.5))
        idf = idf if idf > 0 else 1e-6
        return idf * f * (K1 + 1) / (f + K1 * (1 - B + B * lucene_length(self.length[i]) / self.mean))

    def osmem(self, term: str, i: int) -> float:
        f = math.sqrt(self.tf[i].get(term, 0))
        if not f:
            return 0.0
        idf = math.log(1 + (self.total - self.df[term] + 0.5) / (self.df[term] + 0.5))
        return idf * f * K1 / (f + K1 * (1 - B + B * self.length[i] / self.osmem_avg))


def row_field(stems: list[str], contexts: list[str], weight: float) -> Field:
    """The `terms` field of mapping v3 over the same documents."""
    return Field([records.ranked_terms(s, c, weight) for s, c in zip(stems, contexts)])


def fts5(terms: list[str], words: list[int], stems: Field, context: Field, weight: float) -> list[float]:
    """FTS5 `bm25()` scores (higher is better) of every row for a `{stems context}` OR query."""
    n = len(words)
    lengths = [words[i] + stems.length[i] + context.length[i] for i in range(n)]
    mean = sum(lengths) / n
    out = [0.0] * n
    for t in terms:
        hits = [i for i in range(n) if stems.tf[i].get(t) or context.tf[i].get(t)]
        idf = math.log((n - len(hits) + 0.5) / (len(hits) + 0.5))
        idf = idf if idf > 0 else 1e-6
        for i in hits:
            f = stems.tf[i].get(t, 0) + weight * context.tf[i].get(t, 0)
            out[i] += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * lengths[i] / mean))
    return out


def measure(conversations: Sequence[Conversation]) -> dict[str, Any]:
    """Each formula's recall over `conversations`, how often the FTS5 replica's top 10 is
    the store's, the `terms` field's mean length against osmem's average, and the
    questions where osmem's formula loses evidence turns that Lucene's keeps."""
    settings = Settings(embedder="none")
    weight = settings.context_weight
    names = ("store", "fts5", "lucene two fields", "lucene", "lucene k1 2.4", "fts5 on lucene", "osmem")
    copies, _ = records.ranked_copies(weight)
    recalls: dict[str, dict[int, list[float]]] = {name: {1: [], 10: [], 20: []} for name in names}
    agree: list[bool] = []
    lost: list[tuple[str, float, float]] = []  # question, its evidence rows' length, osmem's top-10 rows' length
    averages: list[tuple[float, float]] = []  # per conversation: the `terms` field's mean length, osmem's "average"
    for number, conv in enumerate(conversations):
        with tempfile.TemporaryDirectory() as tmp:
            system = XMemoSystem(settings, None, Path(tmp), owner=f"scoring-{number}")
            for turn in conv.turns:
                system.remember(turn)
            rows = system.store._conn.execute(
                "SELECT m.reference, f.words, f.stems, f.context FROM memories m JOIN memories_fts f ON f.rowid = m.rowid "
                "ORDER BY m.created_at DESC, m.rowid DESC"
            ).fetchall()
            refs = [r["reference"] for r in rows]
            words = [len(r["words"].split()) for r in rows]
            stems, context = Field([r["stems"] for r in rows]), Field([r["context"] for r in rows])
            row = row_field([r["stems"] for r in rows], [r["context"] for r in rows], weight)
            averages.append((row.mean, row.osmem_avg))
            rf = _read_filter(system.svc, system.principal, object())
            everyone = range(len(rows))
            for q in conv.questions:
                terms = text.query_terms(q.text, strict=False)
                scores = {
                    "fts5": fts5(terms, words, stems, context, weight),
                    "lucene two fields": [sum(stems.lucene(t, i) + weight * context.lucene(t, i) for t in terms) for i in everyone],
                    "lucene": [sum(row.lucene(t, i) for t in terms) for i in everyone],
                    "lucene k1 2.4": [sum(row.lucene(t, i, K1 * copies) for t in terms) for i in everyone],
                    "fts5 on lucene": [sum(row.fts5_on_lucene(t, i, copies) for t in terms) for i in everyone],
                    "osmem": [sum(row.osmem(t, i) for t in terms) for i in everyone],
                }
                ranked = {name: [i for i in sorted(everyone, key=lambda i: -s[i]) if s[i] > 0][:60] for name, s in scores.items()}
                lexical = system.store.search(q.text, None, rf, lexical_k=60, semantic_k=0, strict=False).lexical
                store_refs = [h.memory.reference for h in lexical]
                agree.append(store_refs[:10] == [refs[i] for i in ranked["fts5"][:10]])
                by_turn = {d: i for i, r in enumerate(refs) for d in system.ids.get(r, [])}
                wanted = [by_turn[e] for e in q.evidence if e in by_turn]
                ids10 = {name: {d for i in order[:10] for d in system.ids.get(refs[i], [])} for name, order in ranked.items()}
                if wanted and len(ids10["lucene"] & set(q.evidence)) > len(ids10["osmem"] & set(q.evidence)):
                    lost.append((q.text, fmean(row.length[i] for i in wanted), fmean(row.length[i] for i in ranked["osmem"][:10])))
                orders = {name: [refs[i] for i in order] for name, order in ranked.items()}
                orders["store"] = store_refs
                for name, order in orders.items():
                    ids = [system.ids.get(r, []) for r in order]
                    for k in recalls[name]:
                        recalls[name][k].append(recall_at_k(ids, q.evidence, k))
            system.close()
    return {
        "questions": len(agree),
        "agree": fmean(agree),
        "recall": {name: {k: fmean(v) for k, v in by_k.items()} for name, by_k in recalls.items()},
        "mean_length": fmean(m for m, _ in averages),
        "osmem_average": fmean(a for _, a in averages),
        "lost": lost,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--conversations", type=int)
    args = p.parse_args()
    out = measure(data.load(args.data)[: args.conversations])
    print(f"lexical leg alone, {out['questions']} questions; fts5 replica's top 10 = the SQLite store's for {out['agree']:.3f} of them\n")
    print("| scoring | recall@1 | recall@10 | recall@20 |\n| --- | --- | --- | --- |")
    for name, by_k in out["recall"].items():
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in by_k.values()) + " |")
    print(
        f"\nthe `terms` field holds {out['mean_length']:.1f} terms per memory on average; osmem's BM25 "
        f"divides by {out['osmem_average']:.1f} (distinct terms per document + 1)"
    )
    lost = out["lost"]
    if lost:
        print(
            f"\nosmem's formula keeps fewer evidence turns in its top 10 than Lucene's on {len(lost)} questions; "
            f"there the evidence turns' `terms` hold {fmean(e for _, e, _ in lost):.1f} terms on average, the turns "
            f"osmem ranks in their place {fmean(t for _, _, t in lost):.1f}. First ones:"
        )
        for question, evidence, top in lost[:5]:
            print(f"- {question!r}: evidence {evidence:.0f} terms, osmem's top 10 {top:.1f}")


if __name__ == "__main__":
    main()
