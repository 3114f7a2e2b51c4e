"""Compare measures of "this note answers this query" as a gate, from dump.py's files
(/tmp/h45abst-measures). For each measure: the threshold at which it loses at most 0.5 % of
the answers found on seed 40 (the tuning set), then on every set the queries with no answer
that still get an answer (left) and the answers found before that the gate empties (lost).
Sets: smallstores seeds 40 and 41 (off-topic and random letters; found@3 answers), the
independent store (probe_store.py), the notes bench's dev half (no-answer questions; answers
with a relevant note). Run from the worktree root: .venv/bin/python bench-out/smallstores/measures/analyse.py"""
import json
import sys

import numpy as np

sys.path.insert(0, "functions/shared")
from xmemo.retrieval.relevance import abbreviates  # noqa: E402

DIR = "/tmp/h45abst-measures"


def merged(records):
    """One record per read: a read the cut emptied was logged twice (the cut, then the empty result)."""
    out = []
    for r in records:
        if r.get("empty_before_cut") and out and "plan_sem" not in out[-1] and out[-1]["query"] == r["query"]:
            out[-1]["plan_sem"] = r["plan_sem"]
            continue
        out.append(r)
    return out


def load(name, notes=False):
    rows, seen = [], set()
    for r in merged(json.load(open(f"{DIR}/{name}.json"))):
        if notes:
            if r["qid"] in seen:
                continue  # the pack (first read of each question)
            seen.add(r["qid"])
            answerable = bool(r["judg"])
            found = answerable
        else:
            answerable = r["target"] is not None
            found = answerable and bool(r.get("cands")) and any(x["content"] == r["target"] and x["ref"] in r["kept"][:3] for x in r["cands"])
        passed = bool(r.get("cands")) and "late_joint" in r  # something passed the floors: a gate can act
        rows.append((answerable, found, passed, r))
    return rows


SETS = {"seed 40": load("small40"), "seed 41": load("small41"), "independent": load("probe"), "notes dev": load("notes-dev", True)}


def abbreviated(r):
    return not r.get("crowded") and any(abbreviates(r["query"], x["content"]) for x in r["cands"])


def best(r, f):
    return max(f(x, r) for x in r["cands"])


def base(r):
    return r["plan_sem"]["baseline"]


MEASURES = {
    "lift (the floors' measure)": lambda r: best(r, lambda x, r: x["lift"] or 0),
    "evidence (lift + 0.05 terms + 0.2 late)": lambda r: best(r, lambda x, r: (x["lift"] or 0) + 0.05 * x["cov"] + 0.2 * (x["late"] or 0)),
    "lift over the 3 closest background sentences": lambda r: best(r, lambda x, r: (x["lift"] or 0) + base(r) - sum(r["bg"][:3]) / 3),
    "late": lambda r: best(r, lambda x, r: x["late"] or 0),
    "match: late + 0.5 terms (kept)": lambda r: best(r, lambda x, r: (x["late"] or 0) + 0.5 * x["cov"]),
    "match over the background's best late score": lambda r: best(r, lambda x, r: (x["late"] or 0) + 0.5 * x["cov"]) - r["late_pool_bg"][0],
    "best lift minus the 30th (peaked, not flat)": lambda r: r["all_lifts"][0] - (r["all_lifts"][30] if len(r["all_lifts"]) > 30 else min(r["all_lifts"])),
}


def logistic():
    """lift, late, terms: a logistic model fitted on seed 40 (answers found vs no-answer reads that passed the floors)."""
    X, Y = [], []
    for a, f, p, r in SETS["seed 40"]:
        if p and (f or not a):
            X.append(feats(r))
            Y.append(1.0 if a else 0.0)
    X, Y = np.array(X), np.array(Y)
    mu, sd = X.mean(0), X.std(0) + 1e-9
    Z = (X - mu) / sd
    w, b = np.zeros(Z.shape[1]), 0.0
    balance = (len(Y) - Y.sum()) / Y.sum()
    for _ in range(5000):
        p = 1 / (1 + np.exp(-(Z @ w + b)))
        g = (p - Y) * np.where(Y == 1, balance, 1.0)
        w -= 0.1 * Z.T @ g / len(Y)
        b -= 0.1 * g.mean()
    return lambda r: float(((np.array(feats(r)) - mu) / sd) @ w + b)


def feats(r):
    return [best(r, lambda x, r: x["lift"] or 0), best(r, lambda x, r: x["late"] or 0), best(r, lambda x, r: x["cov"])]


MEASURES["logistic(lift, late, terms) fitted on seed 40"] = logistic()


def gated(r, f, t, exempt):
    return f(r) < t and not (exempt and abbreviated(r))


def outcome(rows, f, t, exempt):
    left = sum(1 for a, fo, p, r in rows if not a and p and not gated(r, f, t, exempt))
    lost = sum(1 for a, fo, p, r in rows if a and fo and p and gated(r, f, t, exempt))
    return left, sum(1 for a, *_ in rows if not a), lost, sum(1 for a, fo, *_ in rows if a and fo)


def threshold(f, exempt, share=0.005):
    vals = sorted(f(r) for a, fo, p, r in SETS["seed 40"] if a and fo and p and not (exempt and abbreviated(r)))
    return vals[int(share * len(SETS["seed 40"]) / 1)] if vals else 0.0


def main():
    lines = ["# Measures of \"this note answers this query\" as an abstention gate", "",
             "Each measure's threshold: the one losing at most 0.5 % of seed 40's found answers (abbreviated hits exempt, "
             "as `relevance.abbreviates` makes them evidence of their own). *left*: no-answer reads still answered "
             "(of all no-answer reads; the rest the floors or the gate empty); *lost*: answers found before that the gate empties.", "",
             "| measure | threshold | " + " | ".join(f"{s}: left / lost" for s in SETS) + " |",
             "|---|---|" + "---|" * len(SETS)]
    for name, f in MEASURES.items():
        t = threshold(f, True)
        cells = []
        for s, rows in SETS.items():
            left, nna, lost, found = outcome(rows, f, t, True)
            cells.append(f"{left}/{nna} / {lost}/{found}")
        lines.append(f"| {name} | {t:.3f} | " + " | ".join(cells) + " |")
    for title, key, ts in (("match: late + 0.5 terms", "match: late + 0.5 terms (kept)", (0.0, 0.26, 0.28, 0.29, 0.30, 0.31, 0.32, 0.33, 0.35)),
                           ("evidence", "evidence (lift + 0.05 terms + 0.2 late)", (0.0, 0.11, 0.12, 0.13, 0.135, 0.14, 0.145, 0.15, 0.16, 0.18))):
        f = MEASURES[key]
        lines += ["", f"## {title}: the curve (abbreviated hits exempt)", "",
                  "| floor | " + " | ".join(f"{s}: left / lost" for s in SETS) + " |", "|---|" + "---|" * len(SETS)]
        for t in ts:
            cells = []
            for s, rows in SETS.items():
                left, nna, lost, found = outcome(rows, f, t, True)
                cells.append(f"{left}/{nna} / {lost}/{found}")
            lines.append(f"| {t:.3f} | " + " | ".join(cells) + " |")
    lines += ["", "## match: the terms' weight (each at its own threshold losing at most 0.5 % of seed 40's answers)", "",
              "| late + w × terms | threshold | " + " | ".join(f"{s}: left / lost" for s in SETS) + " |", "|---|---|" + "---|" * len(SETS)]
    for w in (0.0, 0.25, 0.5, 1.0):
        f = lambda r, w=w: best(r, lambda x, r: (x["late"] or 0) + w * x["cov"])
        t = threshold(f, True)
        cells = []
        for s, rows in SETS.items():
            left, nna, lost, found = outcome(rows, f, t, True)
            cells.append(f"{left}/{nna} / {lost}/{found}")
        lines.append(f"| w = {w} | {t:.3f} | " + " | ".join(cells) + " |")
    m, e = MEASURES["match: late + 0.5 terms (kept)"], MEASURES["evidence (lift + 0.05 terms + 0.2 late)"]
    lines += ["", "## both gates: empty when the match is below its floor or the evidence below its own (abbreviated hits exempt)", "",
              "| match_floor, small-store evidence floor | " + " | ".join(f"{s}: left / lost" for s in SETS) + " |", "|---|" + "---|" * len(SETS)]
    for tm in (0.29, 0.30, 0.31):
        for te in (0.13, 0.135, 0.14):
            both = lambda r, tm=tm, te=te: -1.0 if (m(r) < tm or e(r) < te) else 1.0
            cells = []
            for s, rows in SETS.items():
                left, nna, lost, found = outcome(rows, both, 0.0, True)
                cells.append(f"{left}/{nna} / {lost}/{found}")
            lines.append(f"| {tm:.2f}, {te:.3f} | " + " | ".join(cells) + " |")
    f = m
    left, nna, lost, found = outcome(SETS["independent"], f, 0.30, False)
    lines += ["", f"Without the abbreviation exemption, at 0.30 the independent store loses {lost} of {found} answers "
              "(\"auth decision\" for the Cognito note) and leaves {left} of {nna} no-answer reads answered.".replace("{left}", str(left)).replace("{nna}", str(nna))]
    text = "\n".join(lines) + "\n"
    print(text)
    open("bench-out/smallstores/measures/report.md", "w").write(text)


main()
