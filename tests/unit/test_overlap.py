"""A recall whose query must be embedded runs the embedding on a worker thread while the
lexical leg runs (`xmemo.overlap`, `tools._both_legs`): the answer is exactly that of both
legs in one store call, errors from either side reach the caller, and no thread is left
behind per call."""

import threading

import pytest

from tests.conftest import make_principal
from xmemo import overlap, tools
from xmemo.embedding import QueryCache, query_vector
from xmemo.models import ContextInput, RecallInput, RememberInput
from xmemo.services import Services

pytestmark = pytest.mark.embedder
ALICE = make_principal("alice")
BOB = make_principal("bob")
TEXTS = [
    "We decided to use Cognito for MCP authentication.",
    "The staging database is PostgreSQL 16.",
    "Deploys happen on Tuesdays after the standup.",
    "The billing service runs in eu-west-1 behind an ALB.",
    "La base de données de production est sauvegardée chaque nuit.",
    "Bob's notes: the staging database password rotates monthly.",
]
QUERIES = ["which database runs staging", "which day are deploys", "authentication choice", "billing region", "nightly backups of the production database"]


class Recording:
    """The real model, noting on which thread each query was embedded and when it finished;
    `fail_on` makes one text's embedding raise (an embedder outage)."""

    def __init__(self, inner, fail_on: str | None = None):
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
        self.fail_on, self.threads, self.finished = fail_on, [], 0

    def embed_query(self, text):
        self.threads.append(threading.get_ident())
        if text == self.fail_on:
            raise RuntimeError("embedder unavailable")
        vector = self.inner.embed_query(text)
        self.finished += 1
        return vector

    def embed_passages(self, texts):
        return self.inner.embed_passages(texts)


@pytest.fixture
def seeded(semantic_services):
    for content in TEXTS[:-1]:
        tools.remember(semantic_services, ALICE, RememberInput(content=content))
    tools.remember(semantic_services, BOB, RememberInput(content=TEXTS[-1]))
    return semantic_services


def test_overlapped_legs_answer_exactly_as_one_store_call(seeded, e5):
    """Uncached queries take the overlapped path; the same queries with their vectors
    already cached take the single `store.search` with both legs. Same results, scores,
    order and retrieval plan, for recall and recall_context."""
    model = Recording(e5)
    overlapped = Services(seeded.settings, seeded.store, model, seeded.clock)
    cache = QueryCache(e5)
    combined = Services(seeded.settings, seeded.store, cache, seeded.clock)
    for q in QUERIES:
        query_vector(cache, q, ALICE.owner)  # now cached: `_both_legs` makes one store call
        a = tools.recall(overlapped, ALICE, RecallInput(query=q))
        b = tools.recall(combined, ALICE, RecallInput(query=q))
        assert a.model_dump() == b.model_dump()
        assert a.results, q
        c = tools.recall_context(overlapped, ALICE, ContextInput(query=q))
        d = tools.recall_context(combined, ALICE, ContextInput(query=q))
        assert c.model_dump() == d.model_dump()
    assert len(model.threads) == 2 * len(QUERIES)  # every overlapped call embedded its query
    assert threading.get_ident() not in model.threads  # on a worker, not the caller's thread


def test_overlapped_recall_keeps_visibility(seeded):
    """Bob's memory is never in Alice's answer on the overlapped path (the two store calls
    each take her read filter)."""
    for q in ["staging database password", "which database runs staging"]:
        assert all("Bob's notes" not in h.content for h in tools.recall(seeded, ALICE, RecallInput(query=q)).results)
    assert any("Bob's notes" in h.content for h in tools.recall(seeded, BOB, RecallInput(query="staging database password")).results)


def test_embedding_error_reaches_the_caller(seeded, e5):
    model = Recording(e5, fail_on="when do we deploy")
    svc = Services(seeded.settings, seeded.store, model, seeded.clock)
    with pytest.raises(RuntimeError, match="embedder unavailable"):
        tools.recall(svc, ALICE, RecallInput(query="when do we deploy"))
    assert tools.recall(svc, ALICE, RecallInput(query="billing region")).results  # the next call is unaffected


def test_lexical_error_reaches_the_caller_after_the_embedding_finished(seeded, e5):
    """The store fails during the lexical leg: its error propagates, not the embedding's
    result, and only once the worker is done with the embedder."""
    model = Recording(e5)
    svc = Services(seeded.settings, seeded.store, model, seeded.clock)
    seeded.store.close()
    with pytest.raises(Exception, match="closed"):
        tools.recall(svc, ALICE, RecallInput(query="which database runs staging"))
    assert model.finished == 1


def test_no_thread_per_call(seeded, e5):
    svc = Services(seeded.settings, seeded.store, Recording(e5), seeded.clock)
    tools.recall(svc, ALICE, RecallInput(query=QUERIES[0]))
    before = threading.active_count()
    for i in range(3 * overlap.WORKERS):
        tools.recall(svc, ALICE, RecallInput(query=f"{QUERIES[i % len(QUERIES)]} {i}"))
    assert threading.active_count() <= before + overlap.WORKERS
    workers = [t for t in threading.enumerate() if t.name.startswith("xmemo-overlap")]
    assert 1 <= len(workers) <= overlap.WORKERS
