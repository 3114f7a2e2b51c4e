"""Encodings load offline from shipped files, match tiktoken's definitions, and are checked."""

import hashlib
import json

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


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_fast_form_gives_the_same_ranks_as_the_text_file(name, tmp_path, monkeypatch):
    written = tokens.write_fast_ranks(name, tmp_path)
    monkeypatch.setattr(tokens, "fast_path", lambda _name: written)
    parsed = tokens.parse_ranks(name)
    monkeypatch.setattr(tokens, "parse_ranks", lambda _name: pytest.fail("the fast form was not used"))
    assert tokens.load_ranks(name) == parsed


def test_the_package_ships_a_fresh_fast_form():
    """`make install`/`make test` derive it in the package, so tests and `xmemo bench
    coldstart` load encodings as the layer does."""
    for name in tokens.ENCODINGS:
        assert tokens._load_fast_ranks(name) is not None, f"run `python -m xmemo.tokens`: {name}'s fast form is missing or stale"


@pytest.mark.parametrize("damage", ["other source", "other marshal format", "corrupt payload", "no header"])
def test_a_fast_form_that_does_not_match_is_not_used(damage, tmp_path, monkeypatch):
    written = tokens.write_fast_ranks("cl100k_base", tmp_path)
    head, _, payload = written.read_bytes().partition(b"\n")
    header = json.loads(head)
    if damage == "other source":
        header["source_sha256"] = hashlib.sha256(b"x").hexdigest()
    elif damage == "other marshal format":
        header["marshal_version"] += 1
    elif damage == "corrupt payload":
        payload = payload[:-3] + b"\x00\x00\x00"
    written.write_bytes(payload if damage == "no header" else json.dumps(header).encode() + b"\n" + payload)
    monkeypatch.setattr(tokens, "fast_path", lambda _name: written)
    with pytest.warns(UserWarning, match="parsing the text"):
        assert tokens._load_fast_ranks("cl100k_base") is None
    with pytest.warns(UserWarning):
        assert tokens.load_ranks("cl100k_base") == tokens.parse_ranks("cl100k_base")

