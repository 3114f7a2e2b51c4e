"""The crowded store's gate on the notes bench's dev half, as trade-off curves: for each
measure, the answerable questions emptied when the gate empties k of the 25 no-answer
questions (the gate set just above the k-th lowest no-answer value). Measures: today's
evidence (lift + 0.05 terms + 0.2 late), the evidence relative to the store's own lifts for
the query (minus a share of its 10th or 30th best lift: a peaked top, not a flat one), the
lift alone, the match (late + 0.5 terms), and z, the best lift's standing among the first 60.
Reads the dump of bench-out/smallstores/measures/dump.py notes dev. Dev half only."""
import json
import statistics as st

R = json.load(open("/tmp/h45abst-measures/notes-dev.json"))
rows, seen = [], set()
for r in R:
    if r.get("empty_before_cut") and rows and "plan_sem" not in rows[-1] and rows[-1]["query"] == r["query"]:
        rows[-1]["plan_sem"] = r["plan_sem"]
        continue
    rows.append(r)
P = []
for r in rows:
    if r["qid"] not in seen:
        seen.add(r["qid"])
        P.append(r)


def ev(x):
    return (x["lift"] or 0) + 0.05 * x["cov"] + 0.2 * (x["late"] or 0)


def E(r):
    return max(ev(x) for x in r["cands"])


M = {
    "evidence (today)": E,
    "evidence - 0.5 x 10th lift": lambda r: E(r) - 0.5 * r["all_lifts"][10],
    "evidence - 0.5 x 30th lift": lambda r: E(r) - 0.5 * r["all_lifts"][30],
    "evidence - 30th lift": lambda r: E(r) - r["all_lifts"][30],
    "lift": lambda r: max((x["lift"] or 0) for x in r["cands"]),
    "match (late + 0.5 terms)": lambda r: max((x["late"] or 0) + 0.5 * x["cov"] for x in r["cands"]),
    "z of the best lift among 60": lambda r: (r["all_lifts"][0] - st.mean(r["all_lifts"][:60])) / (st.pstdev(r["all_lifts"][:60]) + 1e-9),
}
K = (15, 18, 20, 22, 23, 24, 25)
print("| measure | " + " | ".join(f"{k}/25 empty" for k in K) + " |")
print("|---|" + "---|" * len(K))
for name, f in M.items():
    na = sorted(f(r) if r.get("cands") else -9 for r in P if not r["judg"])
    an = [f(r) if r.get("cands") else -9 for r in P if r["judg"]]
    cells = [str(sum(v < na[k - 1] + 1e-9 for v in an)) for k in K]
    print(f"| {name} | " + " | ".join(cells) + " |")
print("\nCells: answerable questions (of 126) emptied by the same gate.")
