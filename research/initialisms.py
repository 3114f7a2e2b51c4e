"""How often ordinary text spells an initialism by chance: for every three-letter initialism
(a-z, 17,576 of them), the share of texts whose words spell it (`relevance.spelled`), with
the rule a spelling must follow (one phrase of whole words, its first and last not stop
words) and without it (any run of consecutive words). Texts: LoCoMo's turns (written by
neither us nor for this) and the notes bench's memories. A crowded store looks through
the semantic leg's pool (240 hits by default) when a query has an initialism no memory
holds, so the expected number of chance spellings there is 240 x that share; the report
also names the initialisms spelled most often. Nothing is written but the report.

    .venv/bin/python -m research.initialisms --data ../shared/data/locomo/locomo_dev.json --out bench-out/initialisms
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import string
import sys
from pathlib import Path

POOL = 240  # the semantic leg's hits a crowded store looks through (60 candidates x hub_pool 4)


def heads_loose(text: str) -> str:
    """First letters of every run of letters: any consecutive words."""
    from xmemo import text as xtext

    return "".join(xtext.fold(w)[0] for w in re.findall(r"[^\W\d_]+", text))


def spelled_by(texts: list[str], rule: bool) -> dict[str, int]:
    """Per three-letter initialism, how many of `texts` spell it."""
    from xmemo.retrieval.relevance import spelled

    counts: dict[str, int] = {}
    for t in texts:
        if rule:
            found = {"".join(i) for i in _candidates(t) if spelled("".join(i), t)}
        else:
            h = heads_loose(t)
            found = {h[k : k + 3] for k in range(len(h) - 2)}
        for i in found:
            if len(i) == 3 and i.isascii() and i.isalpha():
                counts[i] = counts.get(i, 0) + 1
    return counts


def _candidates(text: str):
    """The three-letter initialisms a text could spell at all (its loose ones): checking only
    those gives the same counts as checking all 17,576."""
    h = heads_loose(text)
    return {tuple(h[k : k + 3]) for k in range(len(h) - 2)}


def summary(name: str, texts: list[str]) -> dict:
    every = ["".join(c) for c in itertools.product(string.ascii_lowercase, repeat=3)]
    out = {"texts": len(texts)}
    for label, rule in (("any consecutive words", False), ("one phrase (the rule)", True)):
        counts = spelled_by(texts, rule)
        share = sum(counts.get(i, 0) for i in every) / (len(every) * len(texts))
        out[label] = {
            "mean share of texts spelling a given initialism": share,
            f"expected chance spellings in a pool of {POOL}": share * POOL,
            "initialisms spelled by at least one text": sum(1 for i in every if counts.get(i)),
            "most often (texts)": sorted(counts.items(), key=lambda kv: -kv[1])[:8],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.initialisms")
    p.add_argument("--data", type=Path, required=True, help="LoCoMo's json (e.g. ../shared/data/locomo/locomo_dev.json)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)

    from xmemo.bench import notes
    from xmemo.bench.locomo import data

    corpora = {
        "LoCoMo turns": [t.content for c in data.load(args.data) for t in c.turns],
        "notes bench memories": [n.content for n in notes.load().notes],
    }
    report = {name: summary(name, texts) for name, texts in corpora.items()}
    lines = ["# Chance spellings of three-letter initialisms", "", f"Command: `python -m research.initialisms --data {args.data} --out {args.out}`", ""]
    for name, r in report.items():
        lines += [f"## {name} ({r['texts']} texts)", "", "| spelling counted | mean share of texts | expected in a pool of 240 | initialisms spelled at all | most often (texts) |", "|---|---|---|---|---|"]
        for label in ("any consecutive words", "one phrase (the rule)"):
            x = r[label]
            most = ", ".join(f"{i} {n}" for i, n in x["most often (texts)"])
            lines.append(f"| {label} | {x['mean share of texts spelling a given initialism']:.6f} | {x[f'expected chance spellings in a pool of {POOL}']:.3f} | {x['initialisms spelled by at least one text']} | {most} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text + "\n")
    (args.out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out / "command.txt").write_text(f"python -m research.initialisms --data {args.data} --out {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
