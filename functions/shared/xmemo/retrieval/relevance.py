"""How far a semantic hit stands above chance, for this query.

Embedding models give every text a high cosine to every query (multilingual-e5: about
0.8 for anything, nonsense included), so no absolute cosine tells a match from noise. Each
query is therefore also compared with a fixed background of ordinary sentences
(`background.txt`, several languages, about nothing in particular), and a hit counts by
its *lift*: its cosine minus the query's mean cosine to that background (cohort
normalisation, the T-norm of speaker verification). Nonsense and questions about things
never stored have little lift over anything; a real match stands out.

Two thresholds use it (`RetrievalSettings`): `semantic_floor`, the lift a hit needs to
count on semantic evidence, and `relevance_floor`, the lift the best hit needs before a
memory that merely shares some query words counts (unless one memory holds every query
term). So "a topic that was never saved" does not return whatever mentions a topic.

A query none of whose words the store has ever seen (the lexical leg finds nothing) has
only semantic evidence, and the best of N chance lifts grows with N: on LoCoMo-sized
stores random letter strings reached 0.072, as much as a real paraphrase in a store of
one memory (0.073). So in a store at least as large as the semantic leg's candidate
list, such a query is answered only when its best hit reaches `unknown_words_floor`
(`semantic_floor_for`); a query that shares any vocabulary with the store, or asks a
smaller one, keeps `semantic_floor`, so real paraphrases are not lost.

A question about someone the store never heard of usually shares ordinary words with it
("When did Jon go to the fair?" asked of a store about Caroline and Melanie) and lifts
some turn moderately. What gives it away is its distinguishing word: a name (`names`, a
capitalised word past the first) that no memory holds. Such a query is answered only when
its best hit reaches `unknown_names_floor` (`stranger`), in a store of any size: small
stores of a conversation's turns answered another conversation's questions 0.37 of the time
while the rule ran in crowded stores only (`xmemo bench smallstores --locomo`). A real
question names people the store knows, and a strong hit still answers one with a typo in
a name."""

from __future__ import annotations

import re
import statistics
import unicodedata
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING, Callable, Iterable

from .. import text as _text
from ..embedding import Embedder
from .profile import PROFILE

if TYPE_CHECKING:  # numpy only where a vector is compared (a handler without a model never imports it)
    import numpy as np


@lru_cache(maxsize=1)
def background_texts() -> tuple[str, ...]:
    lines = files(__package__).joinpath("background.txt").read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip())


_MATRICES: dict[tuple[str, int], np.ndarray] = {}


def _background(embedder: Embedder) -> np.ndarray:
    """The background's unit vectors for this model, embedded once per process."""
    import numpy as np

    key = (embedder.name, embedder.dimension)
    if key not in _MATRICES:
        vectors = np.asarray(embedder.embed_passages(list(background_texts())), dtype=np.float32)
        _MATRICES[key] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return _MATRICES[key]


def warm(embedder: Embedder) -> None:
    """Load the model and embed the background now (a function's initialisation), so the
    first recall does not pay for either."""
    _background(embedder)


def baseline(embedder: Embedder, query_vector: np.ndarray) -> float:
    """The query's mean cosine to the background: what an unrelated text scores."""
    import numpy as np

    q = np.asarray(query_vector, dtype=np.float32)
    return float((_background(embedder) @ (q / np.linalg.norm(q))).mean())


def lexical_trusted(top_lift: float | None, every_term_matched: bool, floor: float) -> bool:
    """Whether sharing query words is evidence enough for this query: yes when the
    semantic leg sees something relevant (best lift at or above `floor`), when one memory
    holds every query term, or when there is no semantic leg to ask (`top_lift` None)."""
    return top_lift is None or top_lift >= floor or every_term_matched


def holds_every_term(query: str, content: str) -> bool:
    """Whether `content` holds every tolerant term of `query` (English stems, stop words
    aside), so an inflected word ("sunsetting", "deployments") counts as held."""
    terms = set(_text.query_terms(query, strict=False))
    return bool(terms) and terms <= set(_text.stems(content))


def semantic_floor_for(
    words_known: bool, top_lift: float | None, crowded: bool, semantic_floor: float, unknown_words_floor: float
) -> float:
    """The lift a semantic hit needs for this query: `semantic_floor`, unless the store
    knows none of the query's words, is `crowded` (the caller sees at least as many
    memories as the semantic leg fetches, so chance alone lifts some hit high) and even
    the best hit stays below `unknown_words_floor`: then that floor, so nothing counts.
    A query with typos or in another language than the memories it matches shares no
    word with them, but its best hit clears that floor, and its other hits keep
    `semantic_floor`; in a small store the semantic floor alone holds."""
    if words_known or top_lift is None or not crowded or top_lift >= unknown_words_floor:
        return semantic_floor
    return max(semantic_floor, unknown_words_floor)


STORE_COHORT_MIN = PROFILE.constants.store_cohort_min  # lifts a small store's median is taken over, at least


def store_floor(floor: float, words_known: bool, crowded: bool, lifts: Iterable[float], margin: float, lowest: float) -> float:
    """The semantic floor for a query of a small store, with the store's own memories as its
    cohort. In a store smaller than the semantic leg's list every memory is a hit, so the
    median of their lifts is what an unrelated memory of this store scores for this query: a
    question worded like the store's memories lifts all of them a little (English ones, over a
    background mostly English, little; Korean ones, over three Korean lines, a lot), and a hit
    that stands `margin` above that median stands out of the store, even below `floor`. Only
    for a query sharing a word with the store (`words_known`): random letters lift whichever
    memory shares their subwords out of a small store's median. Never below `lowest`, never
    above `floor`; `margin` negative, a crowded store, or fewer than `STORE_COHORT_MIN` lifts:
    `floor`. A lowered floor still leaves the answer to the small-store gates (`evidence`)."""
    values = list(lifts)
    if margin < 0 or crowded or not words_known or len(values) < STORE_COHORT_MIN:
        return floor
    return min(floor, max(lowest, statistics.median(values) + margin))


_NAME = re.compile(r"[^\W\d_][\w-]*", re.UNICODE)
MAX_NAMES = PROFILE.constants.names_checked  # the names a query is checked for (one strict lexical look each)
# Capitalised words that name a date, not someone or something a memory must hold: a
# store keeps when a memory was written as its date, and its text rarely names the month
# ("What did Caroline do in November?"). English and German, full and short.
CALENDAR = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday mon tue tues wed thu thurs fri sat sun januar februar marz juni juli
    oktober dezember montag dienstag mittwoch donnerstag freitag samstag sonntag""".split()
)


def names(query: str) -> list[str]:
    """The query's capitalised words past its first, not stop words nor `CALENDAR` words,
    a possessive 's dropped, at most `MAX_NAMES`: the people, places and things it asks
    about by name.
    The first word is left out (any word may start a sentence with a capital); so is a
    word in capitals throughout of two letters or fewer ("I", "OK"). A query whose capitals
    mark no names (`capitals_name_nothing`) has none."""
    if capitals_name_nothing(query):
        return []
    found: list[str] = []
    for word in _NAME.findall(query)[1:]:
        word = re.sub(r"['’]s$", "", word)
        folded = _text.fold(word)
        if not word[0].isupper() or (word.isupper() and len(word) <= PROFILE.constants.name_short_capitals) or _text.is_stop_word(folded) or folded in CALENDAR:
            continue
        if word not in found:
            found.append(word)
    return found[:MAX_NAMES]


# German stop words that are no French stop word ("des", "du") nor an English word ("den",
# "er", "fur"; "für" is told by its ü): one, typed in lower case, marks a German query.
GERMAN_MARKERS = _text.GERMAN_STOPWORDS - _text.FRENCH_STOPWORDS - _text.ENGLISH_STOPWORDS - {"den", "er", "fur"}


def capitals_name_nothing(query: str) -> bool:
    """Whether a capital in this query says nothing about names: German capitalises every
    noun ("welches Werkzeug nehmen wir für Server", "Auth Entscheidung"), and a query with
    every word capitalised is a title. German is recognised by one of `GERMAN_MARKERS` or
    by ä, ö, ü or ß (which also turns the rule off for Finnish, Swedish or Turkish
    queries, as if they had no capitals)."""
    words = _NAME.findall(query)
    if len(words) > 1 and all(w[0].isupper() for w in words):
        return True
    return any(c in "äöüß" for c in unicodedata.normalize("NFC", query).lower()) or any(w in GERMAN_MARKERS for w in words)


def stranger(top_lift: float | None, unknown_names_floor: float, unknown: Callable[[str], bool], query: str) -> bool:
    """Whether to answer this query with nothing: the best hit stays below
    `unknown_names_floor` and one of the query's `names` is `unknown` to the store (no
    memory holds it). Asked only when the first holds, so a strong query pays for no look."""
    if top_lift is None or top_lift >= unknown_names_floor:
        return False
    return any(unknown(name) for name in names(query))


def abbreviates(query: str, content: str, shortest: int = PROFILE.constants.abbreviation_shortest) -> bool:
    """Whether a word of `query` (at least `shortest` letters, not a stop word) is the
    start of a longer word of `content` ("auth" of "authentication", "docs" of
    "documentation": a plural abbreviation counts without its s), or a word of at least
    `WHOLE` letters that `content` holds, whole or in a compound ("search", "Suche" of
    "Volltextsuche"). People type abbreviations and single words where a memory says
    more, and the embedding model alone lifts such questions little (about as much as
    chance in a small store), so a hit sharing such a word carries evidence of its own.
    Initialisms ("PDB") are `spelled`, apart.
    Shorter whole words are left out: in a language without a stop list here they are
    mostly function words ("avec", "von")."""
    asked = {w for w in _text.query_terms(query, strict=True) if len(w) >= shortest and not _text.is_stop_word(w)}
    if not asked:
        return False
    held = set(_text.words(content))
    return any(_starts_or_holds(w, h) for w in asked for h in held)


WHOLE = PROFILE.constants.abbreviation_whole


def _starts_or_holds(word: str, held: str) -> bool:
    start = word[:-1] if len(word) > PROFILE.constants.abbreviation_plural and word.endswith("s") else word
    return (held.startswith(start) and len(held) > len(start)) or (len(word) >= WHOLE and word in held)


_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)
_PHRASE_BREAK = re.compile(r"[^\w\s-]+|_+", re.UNICODE)  # punctuation and symbols end a phrase
_WORD = re.compile(r"[^\W\d_]{2,}(?:-[^\W\d_]{2,})*", re.UNICODE)  # letters only; a hyphenated word is one
INITIALISM_SHORTEST = PROFILE.constants.abbreviation_shortest
INITIALISM_LONGEST = PROFILE.constants.initialism_longest


def initialisms(query: str) -> list[str]:
    """The query's words written in capitals throughout ("PDB", "BDD"; a plural's s aside,
    "SLOs"), folded, of `abbreviation_shortest` to `initialism_longest` letters and not stop
    words: what people type for a memory's words ("pod disruption budgets", "base de
    données"), which no lexical leg finds and the embedding model barely lifts. None when
    the query has no lower-case letter and more than one word in capitals (a query typed
    in capitals is not a list of initialisms); random letter strings come lower-case and
    so are never taken for one."""
    words = _LETTERS.findall(query)
    if not any(c.islower() for c in query) and sum(w.isupper() for w in words) > 1:
        return []
    found: list[str] = []
    for word in words:
        bare = word[:-1] if word.endswith("s") and word[:-1].isupper() else word
        folded = _text.fold(bare)
        if bare.isupper() and INITIALISM_SHORTEST <= len(bare) <= INITIALISM_LONGEST and not _text.is_stop_word(folded) and folded not in found:
            found.append(folded)
    return found


def spelled(initialism: str, content: str) -> str | None:
    """The words of `content` whose first letters spell `initialism` (folded, as `initialisms`
    gives it), in order ("Pod disruption budgets" for "pdb"), or None. The words must form
    one phrase: whole words of two letters or more (a hyphenated word is one), apart only
    by spaces (no punctuation, digits or symbols between or in them), its first and last
    not stop words ("base de données" for "bdd"). Otherwise three-letter initialisms turn
    up by chance in ordinary prose ("post it in", "over 50k rows", "click rate; marketing";
    `python -m research.initialisms` counts them)."""
    for phrase in _PHRASE_BREAK.split(content):
        words = phrase.split()
        heads = "".join(_text.fold(w)[0] if _WORD.fullmatch(w) else "\0" for w in words)
        at = heads.find(initialism)
        while at >= 0:
            chosen = words[at : at + len(initialism)]
            if not _text.is_stop_word(_text.fold(chosen[0])) and not _text.is_stop_word(_text.fold(chosen[-1])):
                return " ".join(chosen)
            at = heads.find(initialism, at + 1)
    return None
