"""How many candidates each leg fetches: the setting for `recall`, more for a large pack."""

from tests.conftest import make_principal
from xmemo import tools
from xmemo.models import ContextInput, RecallInput, RememberInput


def _say(services, principal, content, location):
    tools.remember(services, principal, RememberInput(content=content, location=location))


def test_a_large_pack_fetches_more_candidates_than_recall(services):
    """recall_context asks each leg for twice the pack's item limit when that exceeds the
    setting (60): a 50-item pack would otherwise use up nearly every candidate."""
    p = make_principal()
    for n in range(130):
        _say(services, p, f"Note {n}: the harbour crane {n} was inspected.", location=f"site/{n}")
    recalled = tools.recall(services, p, RecallInput(query="harbour crane", limit=10))
    small = tools.recall_context(services, p, ContextInput(query="harbour crane", max_items=8))
    large = tools.recall_context(services, p, ContextInput(query="harbour crane", max_items=50))
    assert recalled.retrieval_plan["lexical"]["candidates"] == 60
    assert small.retrieval_plan["lexical"]["candidates"] == 60
    assert large.retrieval_plan["lexical"]["candidates"] == 100
