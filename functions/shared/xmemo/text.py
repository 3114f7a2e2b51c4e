"""The embedded store's text analysis: accent folding, word tokens, English stems for
Latin words, and bigrams for Hangul/CJK so partial Korean words match (`작업` finds
`작업을`). Both indexing and queries go through the same functions. The CJK ranges and
the stop words are defined here only; the OpenSearch query builder splits and filters
queries with them too."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")

CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK_RUN = re.compile(f"[{CJK}]+")
_TOKEN = re.compile(rf"(?P<cjk>[{CJK}]+)|(?P<word>[^\W_{CJK}]+)")
_APOSTROPHE = re.compile(r"['’]")
# What `_TOKEN` finds in ASCII text, once lower-cased: on ASCII, NFKC changes nothing,
# casefold() is lower(), \w less `_` is [A-Za-z0-9], and no character is CJK
_ASCII_WORD = re.compile(r"[a-z0-9]+")

ENGLISH_STOPWORDS = frozenset(
    """a an and are as at be been but by did do does for from had has have he her his how i if in
    into is it its me my of on or our she so that the their them they this to was we were what
    when where which who why will with you your""".split()
)
FRENCH_STOPWORDS = frozenset(
    """le la les un une des du de d l et est en dans
    pour par sur au aux ce cette ces qui que quoi qu il elle ils elles nous vous je tu se sa son
    ses leur leurs ne pas plus ou où
    avons avez ont sont suis sommes etes ete etre avoir fait quel quelle quels quelles mon mes
    notre nos votre vos avec chez cet lui moi eux""".split()
)
GERMAN_STOPWORDS = frozenset(
    """der das den dem des und oder wir ich du sie er ihr uns ist sind wird werden haben habe fur mit
    von vom zu zum zur auf aufs aus bei ein eine einen einem einer nicht wie wo wer welche welcher
    welches welchen""".split()
)
STOPWORDS = ENGLISH_STOPWORDS | FRENCH_STOPWORDS | GERMAN_STOPWORDS
"""Words a tolerant query drops: English, then French and German function words (the
auxiliaries and pronouns of a question, "quel outil avons-nous", "welches Werkzeug nehmen
wir für", matched every note written in the first person plural). A word that is also an
English content word or a common acronym ("die", "hat", "comment", "ma", "ton", "ai") is left
out of the list: queries
in English outnumber the others ("fur" is in, folded from "für", as the list compares folded
words: `is_stop_word`)."""


def fold(word: str) -> str:
    """Lower-case and strip accents from Latin letters (Hangul is left composed)."""
    word = unicodedata.normalize("NFKC", word).casefold()
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFD", word)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer (Snowball); imported lazily, no I/O at import time

    return Stemmer.Stemmer("english")


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> list[tuple[str, bool]]:
    """(token, is_cjk) pairs of folded text, in order. ASCII text (most memories) takes
    a shortcut with the same result, a third of the time: `recall_context` splits the
    words of every candidate (`retrieval.word_set`)."""
    if text.isascii():
        return [(word, False) for word in _ASCII_WORD.findall(text.lower())]
    return _tokens(text)


def _tokens(text: str) -> list[tuple[str, bool]]:
    """`tokens` of any text: NFKC, then each word folded."""
    out: list[tuple[str, bool]] = []
    for m in _TOKEN.finditer(unicodedata.normalize("NFKC", text)):
        if m.group("cjk"):
            out.append((m.group("cjk"), True))
        else:
            out.append((fold(m.group("word")), False))
    return out


def words(text: str) -> list[str]:
    """Surface terms: folded words, CJK runs as bigrams (strict matching)."""
    if text.isascii():  # `tokens`' shortcut, without the pairs
        return _ASCII_WORD.findall(text.lower())
    out: list[str] = []
    for tok, cjk in tokens(text):
        out.extend(_bigrams(tok) if cjk else [tok])
    return out


def stems(text: str) -> list[str]:
    """Tolerant terms: English Snowball stems of Latin words, CJK runs as bigrams."""
    out: list[str] = []
    latin: list[str] = []
    for tok, cjk in tokens(text):
        if cjk:
            out.extend(_bigrams(tok))
        else:
            latin.append(tok)
            out.append("")  # placeholder keeps order
    stemmed = iter(_stemmer().stemWords(latin)) if latin else iter(())
    return [t if t else next(stemmed) for t in out]


def query_terms(text: str, *, strict: bool) -> list[str]:
    """Distinct terms of a query. Tolerant queries drop stop words (unless nothing is left)."""
    terms = words(text) if strict else stems(text)
    if not strict:
        terms = without_stop_words(terms, [w for w, _ in _aligned(text)])
    return list(dict.fromkeys(terms))


def is_stop_word(word: str) -> bool:
    """A stop word; an elided word (`l'équipe`) only when every part of it is one."""
    return all(fold(part) in STOPWORDS for part in _APOSTROPHE.split(word))


def without_stop_words(items: list[T], surfaces: list[str]) -> list[T]:
    """`items` but those whose surface word is a stop word, unless nothing would be left
    (a query of stop words alone still searches for them)."""
    kept = [item for item, word in zip(items, surfaces) if not is_stop_word(word)]
    return kept or items


def _aligned(text: str) -> list[tuple[str, bool]]:
    """Surface token for each term `stems` yields (bigrams repeat their run)."""
    out: list[tuple[str, bool]] = []
    for tok, cjk in tokens(text):
        out.extend([(tok, cjk)] * (len(_bigrams(tok)) if cjk else 1))
    return out
