"""The pure parts of the gate experiments: chance spellings counted with and without the
phrase rule (`research.initialisms`), a question's tokens grouped into words
(`research.evidence_priors`), and what a plan says of the gates (`research.gate_margins`)."""

from research import evidence_priors, gate_margins, initialisms


def test_the_phrase_rule_counts_fewer_chance_spellings():
    texts = ["post it in the channel", "Pod disruption budgets are required", "over 50k rows; time out"]
    loose, ruled = initialisms.spelled_by(texts, rule=False), initialisms.spelled_by(texts, rule=True)
    assert loose["pii"] == 1 and "pii" not in ruled  # stop words at its ends
    assert loose["pdb"] == ruled["pdb"] == 1
    assert sum(ruled.values()) < sum(loose.values())


def test_a_questions_tokens_are_grouped_into_its_words():
    from xmemo.e5.tokenizer import Tokenizer
    from xmemo.e5.weights import load

    tokenizer = Tokenizer(load().vocabulary)
    ids = tokenizer.content_ids("what do we know about karpenter")
    spans = evidence_priors._word_spans(tokenizer, ids)
    assert [w for _, _, w in spans] == ["what", "do", "we", "know", "about", "karpenter"]
    assert spans[-1][1] - spans[-1][0] == 3 and spans[-1][1] == len(ids)  # kar, pen, ter


def test_a_plan_row_reads_the_cut_and_the_semantic_leg():
    plan = {"cut": {"best": 0.16, "match": 0.43}, "semantic": {"top_lift": 0.08}}
    assert gate_margins._plan_row(plan) == {"best": 0.16, "match": 0.43, "top_lift": 0.08}
    assert gate_margins._plan_row({}) == {"best": None, "match": None, "top_lift": None}
