"""`xmemo bench notes [--out DIR] [--split dev|heldout|both] [--store sqlite|opensearch]`: how much
of what `recall_context` and `recall` return was asked for, on a store of an agent's notes.

LoCoMo is a conversation: neighbouring turns share a topic, and recall metrics reward packing
more. An agent's store is mostly notes: in one place, unrelated notes written one after
another. The corpus (`notes_corpus.json`, beside this file; its `about` says how it was written
and split) is loaded into a fresh store through the real `remember` (type, location and time of
each note), and every question is asked through the real `recall_context` (default budget) and
`recall` (default limit, and 20 for the cut curve). Figures per split:

- pack precision: relevant items (grade >= 1) / items packed, mean over answerable questions
  whose pack is not empty (how many packs were empty is reported beside it);
- pack recall: answers packed (grade 2) / answers judged, mean over answerable questions;
- first relevant: share of answerable questions whose first item is relevant;
- nDCG@5 (graded: gain 2^grade - 1, ideal from the judgments);
- irrelevant tokens: tokens (the pack's own per-item tiktoken counts) of items judged 0,
  mean per question (no-answer questions included: all their tokens are irrelevant);
- empty share on no-answer questions: share whose pack (or recall) is empty;
- the curve: precision and recall when only items scoring at least `cut` x the top item's
  score are kept, as `cut` moves from 0 to 1 (a relative cut, applied after the fact)."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .. import tools
from ..auth import principal_from_claims
from ..models import ContextInput, RecallInput, RememberInput
from ..services import Services
from ..store.sqlite import SQLiteStore
from . import _embedder
from ._report import cell, markdown_table, save

CORPUS = Path(__file__).with_name("notes_corpus.json")
SPLITS = ("dev", "heldout")
CUTS = tuple(round(i / 20, 2) for i in range(21))  # relative cuts 0.00, 0.05, … 1.00
CURVE_LIMIT = 20  # recall's upper bound: the pool the recall curve cuts
NDCG_K = 5
GOAL_PRECISION, GOAL_RECALL = 0.70, 0.95  # the pack's goals on the held-out half (shaded in the plot)


# ---------------------------------------------------------------------------------------
# the corpus
@dataclass(frozen=True)
class Note:
    id: str
    location: str
    type: str
    lang: str
    at: datetime
    content: str


@dataclass(frozen=True)
class Question:
    id: str
    split: str
    kind: str  # single | multi | none
    lang: str
    query: str
    judgments: dict[str, int]  # note id -> 2 (answers it) or 1 (useful context)

    @property
    def answers(self) -> set[str]:
        return {ref for ref, grade in self.judgments.items() if grade == 2}


@dataclass(frozen=True)
class Corpus:
    notes: list[Note]
    questions: list[Question]
    about: list[str]
    split: dict[str, Any]


def load(path: Path = CORPUS) -> Corpus:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    notes = [
        Note(m["id"], m["location"], m["type"], m["lang"], datetime.fromisoformat(m["at"].replace("Z", "+00:00")), m["content"])
        for m in data["memories"]
    ]
    questions = [Question(q["id"], q["split"], q["kind"], q["lang"], q["query"], dict(q["judgments"])) for q in data["questions"]]
    return Corpus(notes, questions, data["about"], data["split"])


# ---------------------------------------------------------------------------------------
# metrics (pure: a list of note ids in rank order against a question's judgments)
def grade(q: Question, ref: str | None) -> int:
    return q.judgments.get(ref, 0) if ref else 0


def ndcg(q: Question, ranked: Sequence[str | None], k: int = NDCG_K) -> float | None:
    """Graded nDCG@k; None for a question with no judgments (nothing to find)."""
    ideal = sorted(q.judgments.values(), reverse=True)[:k]
    if not ideal:
        return None
    dcg = lambda grades: sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(grades))  # noqa: E731
    return dcg([grade(q, r) for r in ranked[:k]]) / dcg(ideal)


def score_list(q: Question, ranked: Sequence[str | None], tokens: Sequence[int] | None = None) -> dict[str, Any]:
    """One question's figures for one ranked list (`tokens`: each item's tokens, for packs)."""
    grades = [grade(q, r) for r in ranked]
    answers = q.answers
    row: dict[str, Any] = {
        "items": len(ranked),
        "relevant": sum(1 for g in grades if g >= 1),
        "precision": (sum(1 for g in grades if g >= 1) / len(ranked)) if ranked and answers else None,
        "recall": (len(answers & set(ranked)) / len(answers)) if answers else None,
        "first_relevant": (grades[0] >= 1 if grades else False) if answers else None,
        "ndcg@5": ndcg(q, ranked),
        "empty": not ranked,
    }
    if tokens is not None:
        row["tokens"] = sum(tokens)
        row["irrelevant_tokens"] = sum(t for t, g in zip(tokens, grades) if g == 0)
    return row


def cut(scores: Sequence[float], fraction: float) -> int:
    """How many of a ranked list's leading items score at least `fraction` x the top score."""
    if not scores:
        return 0
    top = scores[0]
    return sum(1 for s in scores if s >= fraction * top) if top > 0 else len(scores)


def mean(values: Iterable[float | bool | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return round(sum(kept) / len(kept), 4) if kept else None


def summarize(rows: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """The split's figures for one list (`key`: "pack" or "recall") over its question rows."""
    answerable = [r for r in rows if r["kind"] != "none"]
    unanswerable = [r for r in rows if r["kind"] == "none"]
    lists = [r[key] for r in answerable]
    out: dict[str, Any] = {
        "questions": len(rows),
        "answerable": len(answerable),
        "no_answer": len(unanswerable),
        "precision": mean(x["precision"] for x in lists if not x["empty"]),
        "empty_on_answerable": sum(1 for x in lists if x["empty"]),
        "recall": mean(x["recall"] for x in lists),
        "first_relevant": mean(x["first_relevant"] for x in lists),
        "ndcg@5": mean(x["ndcg@5"] for x in lists),
        "items": mean(r[key]["items"] for r in rows),
        "empty_on_no_answer": mean(r[key]["empty"] for r in unanswerable),
    }
    if all("irrelevant_tokens" in r[key] for r in rows):
        out["irrelevant_tokens"] = mean(r[key]["irrelevant_tokens"] for r in rows)
        out["irrelevant_tokens_answerable"] = mean(r[key]["irrelevant_tokens"] for r in answerable)
        out["tokens"] = mean(r[key]["tokens"] for r in rows)
    return out


def curve(rows: Sequence[dict[str, Any]], key: str, questions: dict[str, Question]) -> list[dict[str, Any]]:
    """Precision, recall and items per question as the relative cut moves over `key`'s ranked
    lists (row[key + "_ranked"] = [[note id, score], ...])."""
    points = []
    for fraction in CUTS:
        precision, recall, items, empty_none = [], [], [], []
        for r in rows:
            q = questions[r["id"]]
            ranked = r[f"{key}_ranked"]
            kept = [ref for ref, _ in ranked[: cut([s for _, s in ranked], fraction)]]
            figures = score_list(q, kept)
            items.append(len(kept))
            if q.kind == "none":
                empty_none.append(figures["empty"])
                continue
            if not figures["empty"]:
                precision.append(figures["precision"])
            recall.append(figures["recall"])
        points.append({"cut": fraction, "precision": mean(precision), "recall": mean(recall), "items": mean(items),
                       "empty_on_no_answer": mean(empty_none)})
    return points


# ---------------------------------------------------------------------------------------
# running the tools
class _Clock:
    """The Services clock, set to each note's time while storing (`created_at` has no input)."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class NotesStore:
    """One fresh store and owner holding the corpus, read through the real tools."""

    def __init__(self, settings, embedder, folder: Path, store=None):
        self.store = store or SQLiteStore(folder / "xmemo.sqlite3", settings.sqlite_busy_timeout_ms, context_weight=settings.context_weight)
        self.clock = _Clock(datetime.now().astimezone())
        self.svc = Services(settings, self.store, embedder, self.clock)
        scopes = " ".join(f"{settings.resource_server}/memory:{s}" for s in ("read", "write"))
        self.principal = principal_from_claims({"sub": "bench-notes", "scope": scopes}, settings.resource_server)
        self.ids: dict[str, str] = {}  # reference -> note id

    def remember(self, note: Note) -> None:
        self.clock.now = note.at
        result = tools.remember(self.svc, self.principal, RememberInput(content=note.content, type=note.type, location=note.location))
        self.ids[result.memory.reference] = note.id

    def after(self, moment: datetime) -> None:
        """Reads happen after the last note was written."""
        self.clock.now = moment

    def context(self, query: str) -> tuple[list[tuple[str | None, float, int]], dict[str, Any]]:
        result = tools.recall_context(self.svc, self.principal, ContextInput(query=query))  # the default budget
        return [(self.ids.get(i.reference), i.score, i.tokens) for i in result.items], result.retrieval_plan

    def recall(self, query: str, limit: int | None = None) -> list[tuple[str | None, float]]:
        inp = RecallInput(query=query) if limit is None else RecallInput(query=query, limit=limit)
        return [(self.ids.get(h.reference), h.score) for h in tools.recall(self.svc, self.principal, inp).results]

    def close(self) -> None:
        self.store.close()


def ask(store: NotesStore, questions: Sequence[Question], progress: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every question through `recall_context` and `recall`: one raw row each, and the
    retrieval plan of the first pack (the report names what ran)."""
    from tqdm import tqdm

    rows: list[dict[str, Any]] = []
    plan: dict[str, Any] = {}
    for q in tqdm(questions, desc="notes", unit="question", disable=not progress, leave=False):
        pack, pack_plan = store.context(q.query)
        plan = plan or pack_plan
        hits = store.recall(q.query)
        pool = store.recall(q.query, CURVE_LIMIT)
        rows.append({
            "id": q.id, "split": q.split, "kind": q.kind, "lang": q.lang, "query": q.query, "judgments": q.judgments,
            "pack": score_list(q, [ref for ref, _, _ in pack], [t for _, _, t in pack]),
            "recall": score_list(q, [ref for ref, _ in hits]),
            "pack_ranked": [[ref, score] for ref, score, _ in pack],
            "recall_ranked": [[ref, score] for ref, score in pool],
        })
    return rows, plan


def measure(corpus: Corpus, settings, embedder, split: str = "both", store_factory: Callable[[Path], Any] | None = None,
            progress: bool = False, limit: int | None = None) -> dict[str, Any]:
    """Load every note, ask the chosen split's questions (the first `limit` only, for quick
    runs), and return the report: figures and curves per split, plus the raw rows."""
    questions = [q for q in corpus.questions if split == "both" or q.split == split][:limit]
    by_id = {q.id: q for q in corpus.questions}
    with tempfile.TemporaryDirectory(prefix="xmemo-notes-") as tmp:
        store = NotesStore(settings, embedder, Path(tmp), store_factory(Path(tmp)) if store_factory else None)
        try:
            for note in corpus.notes:
                store.remember(note)
            store.after(max(n.at for n in corpus.notes).replace(hour=23, minute=59))
            rows, plan = ask(store, questions, progress)
        finally:
            store.close()
    splits = {}
    for name in SPLITS:
        chosen = [r for r in rows if r["split"] == name]
        if not chosen:
            continue
        splits[name] = {
            "pack": summarize(chosen, "pack"),
            "recall": summarize(chosen, "recall"),
            "curve": {"pack": curve(chosen, "pack", by_id), "recall@20": curve(chosen, "recall", by_id)},
            "by_lang": {lang: summarize([r for r in chosen if r["lang"] == lang], "pack")
                        for lang in sorted({r["lang"] for r in chosen})},
        }
    return {"splits": splits, "rows": rows, "retrieval_plan": plan,
            "corpus": {"notes": len(corpus.notes), "questions": len(corpus.questions), "split": corpus.split}}


# ---------------------------------------------------------------------------------------
# report
PACK_COLUMNS = ("precision", "recall", "first_relevant", "ndcg@5", "irrelevant_tokens", "empty_on_no_answer", "items")


def markdown(report: dict[str, Any]) -> str:
    run = report["run"]
    lines = [
        "# XMemo notes bench",
        "",
        f"Command: `{run['command']}`",
        f"Corpus: {report['corpus']['notes']} notes, {report['corpus']['questions']} questions "
        f"(split seed {report['corpus']['split']['seed']}); store {run['store']}, embedder {run['embedder']}, "
        f"semantic leg {run['semantic']}.",
        *([f"Ranking profile: {run['profile']['name']} version {run['profile']['version']}"
           + (f" (overridden: {', '.join(run['profile']['overridden'])})" if run['profile'].get('overridden') else "") + "."] if "profile" in run else []),
        "",
        "The held-out half is for reporting only: no constant may be tuned on it.",
        "",
        *([warning, ""] if (warning := _embedder.caveat(run, "XMEMO_EVIDENCE_CUT=0 XMEMO_EVIDENCE_FLOOR=-1")) else []),
    ]
    for name, figures in report["splits"].items():
        pack, recall = figures["pack"], figures["recall"]
        lines += [f"## {name} ({pack['questions']} questions: {pack['answerable']} answerable, {pack['no_answer']} with no answer)", ""]
        rows = [
            ["recall_context (default budget)", *(cell(pack.get(c)) for c in PACK_COLUMNS)],
            ["recall (default limit)", *(cell(recall.get(c)) for c in PACK_COLUMNS)],
        ]
        lines.append(markdown_table(["list", *PACK_COLUMNS], rows))
        lines.append(f"Empty packs on answerable questions: {pack['empty_on_answerable']}; "
                     f"mean pack tokens {cell(pack['tokens'])}, of which irrelevant {cell(pack['irrelevant_tokens'])} "
                     f"({cell(pack['irrelevant_tokens_answerable'])} on answerable questions).")
        lines.append("")
        lines.append("By question language (pack):")
        lines.append("")
        lines.append(markdown_table(["lang", "questions", *PACK_COLUMNS], [
            [lang, f["questions"], *(cell(f.get(c)) for c in PACK_COLUMNS)] for lang, f in figures["by_lang"].items()
        ]))
        lines.append("Relative cut (keep items scoring >= cut x the top score), applied to the default pack and to recall's top 20:")
        lines.append("")
        lines.append(markdown_table(
            ["cut", "pack precision", "pack recall", "pack items", "recall@20 precision", "recall@20 recall", "recall@20 items"],
            [[p["cut"], cell(p["precision"]), cell(p["recall"]), cell(p["items"]), cell(r["precision"]), cell(r["recall"]), cell(r["items"])]
             for p, r in zip(figures["curve"]["pack"], figures["curve"]["recall@20"])],
        ))
    lines.append("Definitions: relevant = judged 1 or 2; recall counts answers (judged 2); precision is over answerable "
                 "questions with a non-empty list; irrelevant tokens are per question over all questions of the split.")
    return "\n".join(lines) + "\n"


def rows_json(rows: Sequence[dict[str, Any]]) -> str:
    """The raw rows, one question a line (small enough to keep beside the report)."""
    return "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n]\n"


def svg(report: dict[str, Any]) -> str:
    """Precision against recall as the relative cut moves, one line per split and list; the
    recall axis starts at the tenth below the lowest point, and the goal corner (precision
    >= 0.70, recall >= 0.95) is shaded."""
    width, height, pad = 640, 480, 60
    colours = {("dev", "pack"): "#1f77b4", ("dev", "recall@20"): "#aec7e8", ("heldout", "pack"): "#d62728", ("heldout", "recall@20"): "#ff9896"}
    curves = [
        (split, key, [(p["recall"], p["precision"]) for p in points if p["recall"] is not None and p["precision"] is not None])
        for split, figures in report["splits"].items() for key, points in figures["curve"].items()
    ]
    low = min([math.floor(r * 10) / 10 for _, _, pts in curves for r, _ in pts] + [0.9])
    x = lambda v: pad + (v - low) / (1 - low) * (width - 2 * pad)  # noqa: E731
    y = lambda v: height - pad - v * (height - 2 * pad)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<rect x="{x(GOAL_RECALL):.1f}" y="{y(1):.1f}" width="{x(1) - x(GOAL_RECALL):.1f}" height="{y(GOAL_PRECISION) - y(1):.1f}" fill="#e5f5e0"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle">Precision against recall as the relative cut moves (0 to 1); shaded: the goal</text>',
             f'<line x1="{x(low)}" y1="{y(0)}" x2="{x(1)}" y2="{y(0)}" stroke="black"/>',
             f'<line x1="{x(low)}" y1="{y(0)}" x2="{x(low)}" y2="{y(1)}" stroke="black"/>',
             f'<text x="{width / 2}" y="{height - 15}" text-anchor="middle">recall (answers found / answers judged)</text>',
             f'<text x="15" y="{height / 2}" text-anchor="middle" transform="rotate(-90 15 {height / 2})">precision (relevant / kept)</text>']
    for i in range(11):
        tick = i / 10
        parts.append(f'<text x="{x(low) - 8}" y="{y(tick) + 4}" text-anchor="end">{tick:.1f}</text>')
        parts.append(f'<line x1="{x(low)}" y1="{y(tick)}" x2="{x(1)}" y2="{y(tick)}" stroke="#eee"/>')
    for i in range(round(low * 10), 11):
        parts.append(f'<text x="{x(i / 10):.1f}" y="{y(0) + 16}" text-anchor="middle">{i / 10:.1f}</text>')
    for legend, (split, key, pts) in enumerate(curves):
        colour = colours.get((split, key), "black")
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(f"{x(r):.1f},{y(p):.1f}" for r, p in pts)}"/>')
        parts += [f'<circle cx="{x(r):.1f}" cy="{y(p):.1f}" r="2.5" fill="{colour}"/>' for r, p in pts]
        parts.append(f'<rect x="{x(low) + 10}" y="{y(1) + 6 + legend * 16}" width="12" height="4" fill="{colour}"/>')
        parts.append(f'<text x="{x(low) + 28}" y="{y(1) + 12 + legend * 16}">{split}: {key}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------
# the command
def register(sub) -> None:
    p = sub.add_parser("notes", help="pack precision and recall on a store of an agent's notes (not a conversation)")
    p.add_argument("--out", type=Path, help="folder for report.md, report.json, questions.json and curve.svg (e.g. bench-out/notes)")
    p.add_argument("--split", choices=["dev", "heldout", "both"], default="both", help="which questions to ask (default: both)")
    p.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus file (default: the one shipped with the bench)")
    _embedder.add_option(p)
    p.add_argument("--limit", type=int, help="only the first N questions of the split (quick runs)")
    p.add_argument("--store", choices=["sqlite", "opensearch"], default="sqlite", help="the store under test (default: sqlite)")
    p.add_argument("--opensearch-url", help="OpenSearch for --store opensearch (default: start a local osmem-server, lexical leg only)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def command() -> str:
    """The command as typed, after the retrieval and embedder settings given in the
    environment (only those: no other variable, which might hold a secret, is ever written)."""
    from .locomo import RETRIEVAL_SETTINGS

    names = {f"XMEMO_{name.upper()}" for name in (*RETRIEVAL_SETTINGS, *_embedder.SETTINGS)}
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items()) if k in names]
    argv = sys.argv[3:] if sys.argv[1:3] == ["bench", "notes"] else []
    return " ".join([*env, "xmemo bench notes", *map(shlex.quote, argv)])


def run(args: argparse.Namespace) -> int:
    from ..retrieval.profile import PROFILE
    from .locomo import RETRIEVAL_SETTINGS

    settings, embedder = _embedder.chosen(args)
    corpus = load(args.corpus)
    with ExitStack() as stack:
        factory, label = None, "sqlite (embedded)"
        if args.store == "opensearch":
            from .locomo import stores

            url, label = stack.enter_context(stores.opensearch_at(args.opensearch_url))
            factory = stores.OpenSearchStores(settings, url, "notes")
            stack.callback(factory.close)
        report = measure(corpus, settings, embedder, args.split, factory, progress=not args.no_progress, limit=args.limit)
        semantic = factory.semantic() if factory is not None else ("on" if embedder is not None else "off: no embedder")
    report["run"] = {
        "command": command(),
        "profile": PROFILE.identity(settings),
        "settings": {name: getattr(settings, name) for name in RETRIEVAL_SETTINGS},
        "split": args.split, "limit": args.limit, "store": label, **_embedder.described(settings), "semantic": semantic,
        "corpus": str(args.corpus),
    }
    text = markdown(report)
    print(text)
    if args.out:
        rows = report.pop("rows")
        save(args.out, "report", report, text)
        (args.out / "questions.json").write_text(rows_json(rows))
        (args.out / "curve.svg").write_text(svg(report))
        (args.out / "command.txt").write_text(report["run"]["command"] + "\n")
        print(f"saved {args.out / 'questions.json'}, curve.svg and command.txt")
    return 0
