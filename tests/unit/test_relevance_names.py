"""Which words of a query name someone or something (`relevance.names`), when a name the
store does not hold answers the query with nothing (`relevance.stranger`), and when a
memory holds every word a query asks (`relevance.holds_every_term`)."""

from xmemo.retrieval.relevance import MAX_NAMES, holds_every_term, names, stranger


def test_capitalised_words_past_the_first_are_names():
    assert names("When did Jon go to the fair?") == ["Jon"]
    assert names("What is Caroline's identity?") == ["Caroline"]
    assert names("How did Gina feel after Jon lost his job?") == ["Gina", "Jon"]
    assert names("Où Marie range-t-elle les sauvegardes ?") == ["Marie"]


def test_the_first_word_short_capitals_and_stop_words_are_not():
    assert names("Caroline went where?") == []  # any word may start a sentence
    assert names("auth decision") == [] and names("PagerDuty") == []
    assert names("What did I say, OK?") == []
    assert names("Is it The best?") == []  # a stop word in capitals
    assert names("Where did AWS and GCP differ?") == ["AWS", "GCP"]
    assert len(names("Ann met Bo, Cy, Di, Ed and Flo")) == MAX_NAMES
    assert names("What did Caroline do in November, on a Sunday in Aug?") == ["Caroline"]  # dates are not names


def test_a_stranger_needs_a_crowded_store_a_weak_hit_and_an_unknown_name():
    asked: list[str] = []

    def unknown(name: str) -> bool:
        asked.append(name)
        return name == "Jon"

    q = "What did Jon bake for Nadia?"
    assert stranger(0.09, True, 0.11, unknown, q)
    assert not stranger(0.12, True, 0.11, unknown, q)  # a strong hit answers anyway
    assert not stranger(0.09, False, 0.11, unknown, q)  # a small store keeps its floors
    assert not stranger(None, True, 0.11, unknown, q)  # no semantic leg
    assert not stranger(0.09, True, -1.0, unknown, q)  # switched off
    assert not stranger(0.09, True, 0.11, unknown, "What did Nadia bake?")
    asked.clear()
    stranger(0.2, True, 0.11, unknown, q)
    assert asked == []  # a strong hit pays for no look


def test_every_tolerant_term_held_in_any_inflection():
    assert holds_every_term("what are we sunsetting", "The desktop app will be sunset in March.")
    assert holds_every_term("who is Lucia", "Lucia Moreno leads procurement.")  # stop words aside
    assert not holds_every_term("sunsetting the kayak fleet", "The desktop app will be sunset in March.")
    assert not holds_every_term("", "anything")
