"""Ground truth for the isolation property: who may see which memory, computed from first
principles (holders, scopes, filters) next to the service, never by calling its code.

A memory's content carries a marker word (`qz…`) naming the content, and every
reference has the `mem_` shape, so a leak is found by scanning the raw response text,
wherever in the body or headers it hides.

Matching is modelled from the generated texts alone: every content and query is made of
`VOCAB` words (no stop word, no inflection, no accent, no CJK) and markers, so the
service's analysis (folding, stems, stop words, bigrams) reduces to whole-word equality,
and `terms` refuses any other text rather than guess."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

R, W, T = "memory:read", "memory:write", "memory:temporary"
MARKER = re.compile(r"qz[0-9a-f]{6}\d")
REFERENCE = re.compile(r"mem_[0-9A-Za-z]{20,}")
VOCAB = ("alpha", "bravo", "cobalt", "delta", "ember", "fjord", "glacier", "harbor")


@dataclass(frozen=True)
class Caller:
    label: str
    owner: str
    teams: frozenset[str]
    scopes: frozenset[str]
    token: str = field(default="", compare=False, repr=False)

    @property
    def holders(self) -> frozenset[str]:
        return frozenset({f"owner:{self.owner}"} | {f"team:{t}" for t in self.teams})


@dataclass
class Mem:
    ref: str
    seq: int
    holder: str
    project: str | None
    bucket: str
    type: str
    tags: tuple[str, ...]
    temporary: bool
    content: str
    superseded: bool = False
    supersedes: str | None = None


@dataclass
class Filters:
    team: str | None = None
    project: str | None = None
    bucket: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    include_temporary: bool = False


class World:
    """Every memory ever written in this run (all examples), and which are deleted."""

    def __init__(self) -> None:
        self.memories: dict[str, Mem] = {}
        self.deleted: set[str] = set()
        self._seq = 0

    def add(self, **kw) -> Mem:
        self._seq += 1
        m = Mem(seq=self._seq, **kw)
        self.memories[m.ref] = m
        return m

    def alive(self) -> list[Mem]:
        return [m for m in self.memories.values() if m.ref not in self.deleted]

    # -- what a caller may ever be shown --------------------------------------------------
    def may_see(self, c: Caller, m: Mem) -> bool:
        return m.holder in c.holders and (not m.temporary or T in c.scopes)

    def allowed_tokens(self, c: Caller) -> tuple[set[str], set[str]]:
        """(markers, references) that may appear in a response to `c`."""
        markers, refs = set(), set()
        for m in self.alive():
            if self.may_see(c, m):
                markers.update(MARKER.findall(m.content))
                refs.add(m.ref)
                if m.supersedes:  # the writer published that link with the memory
                    refs.add(m.supersedes)
        return markers, refs

    # -- the expected answers -------------------------------------------------------------
    def readable(self, c: Caller, f: Filters, *, live_only: bool = True, include_temporary: bool | None = None) -> list[Mem]:
        """Memories a read (or, with live_only=False, a forget) by `c` with `f` reaches,
        newest first."""
        holders = {f"team:{f.team}"} if f.team else c.holders
        temp = f.include_temporary if include_temporary is None else include_temporary
        out = [
            m
            for m in self.alive()
            if m.holder in holders
            and not (live_only and m.superseded)
            and (temp or not m.temporary)
            and (f.bucket is None or m.bucket == f.bucket)
            and (f.type is None or m.type == f.type)
            and (f.project is None or m.project == f.project)
            and set(f.tags) <= set(m.tags)
        ]
        return sorted(out, key=lambda m: -m.seq)

    def gettable(self, c: Caller, ref: str) -> Mem | None:
        m = self.memories.get(ref)
        if m is None or ref in self.deleted or m.superseded or m.holder not in c.holders:
            return None
        if m.temporary and T not in c.scopes:
            return None
        return m

    def duplicate_of(self, holder: str, project: str | None, bucket: str, temporary: bool, content: str) -> Mem | None:
        for m in self.alive():
            if (m.holder, m.project, m.bucket, m.temporary, m.content) == (holder, project, bucket, temporary, content) and not m.superseded:
                return m
        return None


def terms(text: str) -> set[str]:
    """The words of a generated text; anything outside VOCAB and markers is a generator
    change this model does not cover, so it fails loudly."""
    words = text.split()
    unknown = [w for w in words if w not in VOCAB and not MARKER.fullmatch(w)]
    assert not unknown, f"the model only knows VOCAB words and markers, not {unknown}"
    return set(words)


def strict_match(query: str, content: str) -> bool:
    """search_memory: every query word is in the content."""
    wanted = terms(query)
    return bool(wanted) and wanted <= terms(content)


def loose_match(query: str, content: str) -> bool:
    """recall, recall_context: some query word is in the content."""
    return bool(terms(query) & terms(content))
