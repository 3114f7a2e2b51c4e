"""Redaction replaces exactly the value: over every secret of the project's corpora, the
text with its markers removed equals the text with its secret values removed — the
label, the separator, the quote and the words after the value stay as written. And a
secret pasted between benign snippets leaves those snippets intact (hypothesis)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.security.secrets_corpus import corpus as security_corpus
from xmemo.bench._policy_corpus import benign_corpus, secret_corpus
from xmemo.policy import apply_policy

MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
# a key block is the value whole, armour included
_BLOCK = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----|PuTTY-User-Key-File-.*?Private-MAC: [0-9a-f]+", re.S)

SAMPLES = [(s.kind, s.values, s.text) for s in secret_corpus()] + [(s.kind, (s.value,), s.text) for s in security_corpus()]
WHOLE_LINE = {"pgpass", "netrc", "htpasswd", "plain_word_password"}
BENIGN = [t for snippets in benign_corpus().values() for t in snippets]


def without_values(text: str, values) -> str:
    for block in _BLOCK.findall(text):
        if any(v in block for v in values):
            text = text.replace(block, "")
    for v in values:
        text = text.replace(v, "")
    return text


def _json_escaped_block(text: str) -> str:
    return re.sub(r"-----BEGIN PRIVATE KEY-----(?:\\n|[A-Za-z0-9+/=])*?-----END PRIVATE KEY-----", "", text)


@pytest.mark.parametrize("kind,values,text", SAMPLES, ids=[f"{k}-{i}" for i, (k, *_) in enumerate(SAMPLES)])
def test_only_the_value_is_replaced(kind, values, text):
    out = apply_policy(text, "redact").content
    expected = without_values(text, values)
    if kind == "gcp_service_account_key":  # the key sits JSON-escaped in a string: the block is the value
        expected = _json_escaped_block(text)
    assert MARKER.sub("", out) == expected


@settings(max_examples=150, deadline=None)
@given(before=st.sampled_from(BENIGN), sample=st.sampled_from(SAMPLES), after=st.sampled_from(BENIGN),
       glue=st.sampled_from(["\n", "\n\n", " "]))
def test_benign_text_around_a_secret_stays_as_written(before, sample, after, glue):
    kind, values, secret_text = sample
    if kind in WHOLE_LINE:  # a line of its own by its format (.pgpass, .netrc, htpasswd, `password=word`)
        glue = "\n"
    out = apply_policy(glue.join([before, secret_text, after]), "redact").content
    assert out.startswith(before + glue) and out.endswith(glue + after)
    assert not any(v in out for v in values)
