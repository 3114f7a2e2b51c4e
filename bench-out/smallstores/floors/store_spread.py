"""Experiment: in a small store (fewer memories than the semantic leg fetches, so every memory is a
semantic hit), a hit counts on semantic evidence when its lift stands MARGIN above the median lift of
the store's memories for this query (capped at the semantic floor, floored at FLOOR_MIN): the store's
own spread as the cohort. The small-store gates stay as they are.
KNOWN_WORDS=1: only for a query that shares a word with the store.
Usage from the worktree root: MARGIN=0.05 FLOOR_MIN=0.03 PYTHONPATH=functions/shared .venv/bin/python THIS small SEED OUT | notes OUT"""
import os, statistics, sys
import xmemo.retrieval.pipeline as pl

MARGIN, FLOOR_MIN = float(os.environ["MARGIN"]), float(os.environ.get("FLOOR_MIN", "0.03"))
MIN_HITS = int(os.environ.get("MIN_HITS", "3"))
KNOWN = os.environ.get("KNOWN_WORDS") == "1"  # only for a query sharing a word with the store (the lexical leg found something)
of = pl.fuse
def fuse(cands, s, base, floor=None, **kw):
    hits = cands.semantic
    if floor is not None and len(hits) >= MIN_HITS and len(hits) < s.semantic_candidates and floor <= s.semantic_floor and (cands.lexical or not KNOWN):
        med = statistics.median(h.score - base for h in hits)
        floor = max(FLOOR_MIN, min(floor, med + MARGIN))
    return of(cands, s, base, floor=floor, **kw)
pl.fuse = fuse

from xmemo.cli import main
sys.exit(main(["bench", "small" + "stores", "--seed", sys.argv[2], "--out", sys.argv[3]] if sys.argv[1] == "small"
              else ["bench", "notes", "--out", sys.argv[2], "--no-progress"]))
