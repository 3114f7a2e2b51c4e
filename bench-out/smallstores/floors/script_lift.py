"""Experiment: each query's lift measured over the background's lines of its own script (the
baseline plus the chance lift a same-script text gets over the background, measured on the
background itself: background_spread.py), then `xmemo bench smallstores` or `notes` as usual.
Usage from the worktree root: PYTHONPATH=functions/shared .venv/bin/python THIS small SEED OUT | notes OUT
(settings through XMEMO_* variables as for the benches)."""
import re, sys, argparse
import numpy as np
import xmemo.retrieval.pipeline as pl
import xmemo.retrieval.relevance as rel

def script(t):
    if re.search("[\uac00-\ud7a3]", t): return "hangul"
    if re.search("[\u3040-\u30ff\u4e00-\u9fff]", t): return "han/kana"
    return "latin"
CHANCE, Q = {}, [""]
def chance(embedder):
    if not CHANCE:
        L = list(rel.background_texts())
        P = rel._background(embedder)
        QV = np.asarray([embedder.embed_query(t) for t in L], dtype=np.float32); QV /= np.linalg.norm(QV, axis=1, keepdims=True)
        C = QV @ P.T
        sc = [script(t) for t in L]
        for s in set(sc):
            v = []
            for i in (i for i, x in enumerate(sc) if x == s):
                others = [j for j in range(len(L)) if j != i]
                same = [j for j in others if sc[j] == s]
                v.append(C[i, same].mean() - C[i, others].mean())
            CHANCE[s] = float(np.mean(v))
        print("chance lift per script", CHANCE, file=sys.stderr)
    return CHANCE
ob = rel.baseline
def baseline(embedder, v):
    return ob(embedder, v) + chance(embedder)[script(Q[0])]
rel.baseline = baseline
ot = pl._tolerant
def tol(store, embedder, s, query, *a):
    Q[0] = query
    return ot(store, embedder, s, query, *a)
pl._tolerant = tol

from xmemo.cli import main
sys.exit(main(["bench", "small" + "stores", "--seed", sys.argv[2], "--out", sys.argv[3]] if sys.argv[1] == "small"
              else ["bench", "notes", "--out", sys.argv[2], "--no-progress"]))
