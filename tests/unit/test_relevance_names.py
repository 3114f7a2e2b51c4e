"""Which words of a query name someone or something (`relevance.names`, none where capitals
say nothing of names), when a name the store does not hold answers the query with nothing
(`relevance.stranger`), and when a memory holds every word a query asks
(`relevance.holds_every_term`)."""

from xmemo.retrieval.relevance import MAX_NAMES, capitals_name_nothing, holds_every_term, names, stranger


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


def test_capitals_name_nothing_in_german_or_a_title():
    # German capitalises every noun: its queries have no names by their capitals
    assert names("welches Werkzeug nehmen wir für Server") == [] and names("wo kauft man ein Kajak") == []
    assert names("Geschichte von Kastanien") == [] and names("Änderung Logs") == [] and names("Preis der Straße") == []
    # every word capitalised: a title, or German nouns alone
    assert names("Auth Entscheidung") == [] and names("Inès Doku Vorliebe") == [] and names("Deploy Process Docs") == []
    # French and English keep theirs, articles and all ("des" and "du" are French too)
    assert names("Quand Marie a-t-elle lu des livres de Proust ?") == ["Marie", "Proust"]
    assert names("What did Nate give to Joanna?") == ["Nate", "Joanna"]
    assert not capitals_name_nothing("When did Jon go to MIT?") and not capitals_name_nothing("PagerDuty")


def test_a_stranger_needs_a_weak_hit_and_an_unknown_name_at_any_store_size():
    asked: list[str] = []

    def unknown(name: str) -> bool:
        asked.append(name)
        return name == "Jon"

    q = "What did Jon bake for Nadia?"
    assert stranger(0.09, 0.11, unknown, q)
    assert not stranger(0.12, 0.11, unknown, q)  # a strong hit answers anyway
    assert not stranger(None, 0.11, unknown, q)  # no semantic leg
    assert not stranger(0.09, -1.0, unknown, q)  # switched off
    assert not stranger(0.09, 0.11, unknown, "What did Nadia bake?")
    assert not stranger(0.09, 0.11, unknown, "Was hat Jon für Nadia gebacken?")  # German: capitals name nothing
    asked.clear()
    stranger(0.2, 0.11, unknown, q)
    assert asked == []  # a strong hit pays for no look


def test_every_tolerant_term_held_in_any_inflection():
    assert holds_every_term("what are we sunsetting", "The desktop app will be sunset in March.")
    assert holds_every_term("who is Lucia", "Lucia Moreno leads procurement.")  # stop words aside
    assert not holds_every_term("sunsetting the kayak fleet", "The desktop app will be sunset in March.")
    assert not holds_every_term("", "anything")
