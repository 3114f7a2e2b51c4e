"""Encodings load offline from shipped files, match tiktoken's definitions, and are checked."""

import hashlib

import pytest
import tiktoken_ext.openai_public as openai_public

from xmemo import tokens


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_definitions_match_tiktoken(name, monkeypatch):
    """Our regex and special tokens are tiktoken's own: build tiktoken's definition with the
    download replaced by our shipped ranks, and compare."""
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: tokens.load_ranks(name))
    official = getattr(openai_public, name)()
    assert official["pat_str"] == tokens.ENCODINGS[name]["pat_str"]
    assert official["special_tokens"] == tokens.ENCODINGS[name]["special_tokens"]


def test_known_token_ids():
    # Reference ids from tiktoken's published encodings.
    assert tokens.get_encoding("o200k_base").encode_ordinary("Hello world") == [13225, 2375]
    assert tokens.get_encoding("cl100k_base").encode_ordinary("Hello world") == [9906, 1917]


def test_tampered_file_is_refused(monkeypatch):
    monkeypatch.setitem(tokens.ENCODINGS, "o200k_base", {**tokens.ENCODINGS["o200k_base"], "sha256": hashlib.sha256(b"x").hexdigest()})
    with pytest.raises(tokens.EncodingFileError):
        tokens.load_ranks("o200k_base")


def test_unknown_encoding():
    with pytest.raises(ValueError):
        tokens.get_encoding("p50k_base")


def test_count_treats_special_token_text_as_text():
    assert tokens.count("<|endoftext|>") > 1
