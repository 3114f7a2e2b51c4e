"""The stop words and CJK ranges are `xmemo.text`'s alone: the OpenSearch query builder
splits and filters queries with them, so both stores agree on what a query asks for."""

from __future__ import annotations

from xmemo import text
from xmemo.store.opensearch import queries as q

MIXED = "Ｔhe 작업을 l'équipe 漢字かな and ｶﾀｶﾅ où hello"


def test_both_stores_split_cjk_runs_the_same_way():
    _, runs = q.split_scripts(MIXED)
    assert runs == [tok for tok, cjk in text.tokens(MIXED) if cjk] == ["작업을", "漢字かな", "カタカナ"]


def test_stop_words_are_one_rule_for_words_and_elided_words():
    assert text.is_stop_word("The") and text.is_stop_word("où") and text.is_stop_word("qu'il")
    assert not text.is_stop_word("l'équipe") and not text.is_stop_word("hello")
    assert text.without_stop_words(["the", "équipe"], ["the", "équipe"]) == ["équipe"]
    assert text.without_stop_words(["the", "a"], ["the", "a"]) == ["the", "a"]  # nothing would be left


def test_tolerant_queries_drop_the_same_stop_words_on_both_stores():
    assert text.query_terms("the équipe and hello", strict=False) == text.stems("équipe hello")
    assert q.lexical_query("the équipe and hello", strict=False)["match"]["terms"]["query"] == " ".join(text.stems("équipe hello"))


def test_the_ascii_shortcut_splits_and_folds_as_the_general_path():
    """`tokens` and `words` take a shortcut for ASCII text; it must find the same words as
    NFKC + `_TOKEN` + `fold` (every ASCII character, underscores, apostrophes, digits)."""
    import random

    rng = random.Random(5)
    alphabet = [chr(c) for c in range(128)]
    samples = ["", "_", "Hello, World! it's 3.5 u.s.a snake_case CamelCase x1y2 ÉTÉ"[:-4], "I'd say: 'twice' last year -- OK?"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(60))) for _ in range(3000)]
    samples += ["".join(rng.choice("aZ0_ '\t\n.-") for _ in range(rng.randrange(30))) for _ in range(2000)]
    for s in samples:
        assert s.isascii()
        general = text._tokens(s)
        assert text.tokens(s) == general, s
        assert text.words(s) == [tok for tok, _ in general], s
        assert text.stems(s) == text._stemmer().stemWords([tok for tok, _ in general]), s


def test_french_and_german_question_words_are_not_searched():
    """"quel outil avons-nous" and "welches Werkzeug nehmen wir für" matched every note written
    in the first person plural ("Nous avons décidé", "Wir haben uns für"); English words that
    are also foreign function words ("die", "hat", "comment", "ai") are still searched."""
    assert text.query_terms("quel outil avons-nous choisi pour le cache", strict=False) == ["outil", "choisi", "cach"]
    assert text.query_terms("welches Werkzeug nehmen wir für die Datenbank", strict=False) == ["werkzeug", "nehmen", "die", "datenbank"]
    assert text.query_terms("why did the plant die", strict=False) == ["plant", "die"]
    assert text.query_terms("comment style", strict=False) == ["comment", "style"]
    assert "ai" in text.query_terms("which AI vendor did we pick", strict=False)  # French "j'ai", but an acronym here
