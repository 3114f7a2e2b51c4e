"""Experiment: each query's lifts scaled by the spread of its own cosines to the background (T-norm's
division by the cohort's standard deviation), relative to the background's median spread, so a query
whose background cosines spread little (its script rare there) gets no larger lifts by that alone.
Usage from the worktree root: PYTHONPATH=functions/shared .venv/bin/python THIS small SEED OUT | notes OUT"""
import dataclasses, sys
import numpy as np
import xmemo.retrieval.pipeline as pl
import xmemo.retrieval.relevance as rel

REF = []
def ref_std(embedder):
    if not REF:
        L = list(rel.background_texts())
        P = rel._background(embedder)
        QV = np.asarray([embedder.embed_query(t) for t in L], dtype=np.float32); QV /= np.linalg.norm(QV, axis=1, keepdims=True)
        C = QV @ P.T
        REF.append(float(np.median([np.delete(C[i], i).std() for i in range(len(L))])))
        print("background median spread", REF[0], file=sys.stderr)
    return REF[0]

class Scaled:
    def __init__(self, store, embedder):
        self._s, self._e = store, embedder
    def __getattr__(self, k):
        return getattr(self._s, k)
    def search(self, query, vector, rf, **kw):
        c = self._s.search(query, vector, rf, **kw)
        if vector is not None and c.semantic:
            q = np.array(vector, dtype=np.float32); q = q / np.linalg.norm(q)
            cos = rel._background(self._e) @ q
            k = ref_std(self._e) / float(cos.std())
            m = float(cos.mean())
            c.semantic = [dataclasses.replace(h, score=m + (h.score - m) * k) for h in c.semantic]
        return c
ot = pl._tolerant
def tol(store, embedder, s, query, *a):
    return ot(Scaled(store, embedder) if embedder is not None else store, embedder, s, query, *a)
pl._tolerant = tol

from xmemo.cli import main
sys.exit(main(["bench", "small" + "stores", "--seed", sys.argv[2], "--out", sys.argv[3]] if sys.argv[1] == "small"
              else ["bench", "notes", "--out", sys.argv[2], "--no-progress"]))
