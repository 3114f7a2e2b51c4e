"""Which query words are initialisms (`relevance.initialisms`), which words of a memory spell
one out (`relevance.spelled`), and that prefix abbreviations (`relevance.abbreviates`) are
another matter."""

from xmemo.retrieval.relevance import abbreviates, initialisms, spelled


def test_words_in_capitals_are_initialisms():
    assert initialisms("when do I need a PDB") == ["pdb"]
    assert initialisms("décision BDD") == ["bdd"]
    assert initialisms("our SLOs for the API") == ["slo", "api"]  # a plural's s aside
    assert initialisms("PDB rules for the PDB") == ["pdb"]
    assert initialisms("스테이징 클러스터 PDB") == ["pdb"] and initialisms("PDB") == ["pdb"]  # no lower-case letter, one word in capitals


def test_short_long_lower_case_and_shouted_words_are_not():
    assert initialisms("is it OK") == []  # two letters
    assert initialisms("the ABCDEFG rollout") == []  # longer than initialisms are typed
    assert initialisms("when do i need a pdb") == []  # random letter strings come lower-case
    assert initialisms("WHEN DO I NEED A PDB") == []  # a query typed in capitals throughout
    assert initialisms("Caroline and THE rest") == []  # a stop word in capitals


def test_a_phrase_of_whole_words_spells_an_initialism():
    assert spelled("pdb", "Pod disruption budgets are required for anything with two replicas.") == "Pod disruption budgets"
    assert spelled("bdd", "Nous avons choisi Postgres pour la base de données.") == "base de données"
    assert spelled("sla", "The service level agreement says 99.9 %.") == "service level agreement"
    assert spelled("pdb", "Nothing here is about pods.") is None


def test_chance_spellings_in_ordinary_prose_do_not():
    assert spelled("pii", "create an override in PagerDuty and post it in #platform-oncall") is None  # stop words at its ends
    assert spelled("okr", "CSV exports over 50k rows time out") is None  # digits in a word
    assert spelled("crm", "a 2% click rate; marketing will rewrite it") is None  # punctuation between
    assert spelled("soc", "the secondary on-call is picked") is None  # a hyphenated word is one word
    assert spelled("crm", "click rate metrics") == "click rate metrics"


def test_an_initialism_is_not_a_prefix_abbreviation():
    """`abbreviates` is for prefixes and whole words; initialisms are `spelled`, apart."""
    assert not abbreviates("when do I need a PDB", "Pod disruption budgets are required.")
    assert abbreviates("k8s PDB docs", "See the documentation.")  # "docs" of "documentation"
