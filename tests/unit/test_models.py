"""SPEC §3 bounds and defaults, and the 400/422 split of §6."""

import pytest

from xmemo.errors import InvalidRequest, OutOfBounds
from xmemo.models import (
    ContextInput,
    ContextPublic,
    ForgetInput,
    RecallInput,
    RecallPublic,
    RememberInput,
    RememberPublic,
    SearchInput,
    SearchPublic,
    parse_input,
)


def test_defaults_are_the_seeds():
    assert RecallPublic(query="q").limit == 5
    assert SearchPublic(query="q").limit == 10
    c = ContextPublic(query="q")
    assert (c.max_items, c.max_tokens) == (8, 1500)
    r = RememberPublic(content="x")
    assert (r.type, r.bucket, r.temporary, r.ttl_seconds, r.tags) == ("note", "default", False, None, [])


@pytest.mark.parametrize(
    "model,field,low,high",
    [
        (RecallInput, "limit", 1, 20),
        (SearchInput, "limit", 1, 50),
        (ContextInput, "max_items", 1, 50),
        (ContextInput, "max_tokens", 1, 12000),
    ],
)
def test_bounds_are_inclusive_and_422_outside(model, field, low, high):
    assert getattr(parse_input(model, {"query": "q", field: low}), field) == low
    assert getattr(parse_input(model, {"query": "q", field: high}), field) == high
    for bad in (low - 1, high + 1):
        with pytest.raises(OutOfBounds) as err:
            parse_input(model, {"query": "q", field: bad})
        assert err.value.code == "out_of_bounds"
        assert field in err.value.message


def test_ttl_bounds():
    base = {"content": "x", "temporary": True}
    assert parse_input(RememberInput, {**base, "ttl_seconds": 60}).ttl_seconds == 60
    assert parse_input(RememberInput, {**base, "ttl_seconds": 2_592_000}).ttl_seconds == 2_592_000
    for bad in (59, 2_592_001):
        with pytest.raises(OutOfBounds):
            parse_input(RememberInput, {**base, "ttl_seconds": bad})


def test_ttl_without_temporary_is_invalid():
    with pytest.raises(InvalidRequest):
        parse_input(RememberInput, {"content": "x", "ttl_seconds": 120})


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_invalid_request(query):
    with pytest.raises(InvalidRequest) as err:
        parse_input(RecallInput, {"query": query})
    assert err.value.code == "invalid_request"


def test_query_length_bound():
    assert len(parse_input(RecallInput, {"query": "  " + "q" * 2000 + "  "}).query) == 2000
    with pytest.raises(OutOfBounds):
        parse_input(RecallInput, {"query": "q" * 2001})


def test_content_is_trimmed_and_bounded_never_truncated():
    assert parse_input(RememberInput, {"content": "  hello \n"}).content == "hello"
    assert len(parse_input(RememberInput, {"content": "x" * 8000}).content) == 8000
    with pytest.raises(OutOfBounds):
        parse_input(RememberInput, {"content": "x" * 8001})
    with pytest.raises(InvalidRequest):
        parse_input(RememberInput, {"content": "   "})


def test_tags_bound_and_slugs():
    assert parse_input(RememberInput, {"content": "x", "tags": [f"t{i}" for i in range(16)]})
    with pytest.raises(OutOfBounds):
        parse_input(RememberInput, {"content": "x", "tags": [f"t{i}" for i in range(17)]})
    for bad in ("Upper", "-lead", "with space", "x" * 64):
        with pytest.raises(InvalidRequest):
            parse_input(RememberInput, {"content": "x", "bucket": bad})


def test_location_bound():
    assert parse_input(RememberInput, {"content": "x", "location": "a/" + "b" * 254}).location
    with pytest.raises(OutOfBounds):
        parse_input(RememberInput, {"content": "x", "location": "b" * 257})


@pytest.mark.parametrize(
    "data",
    [
        {"query": "q", "limit": "5"},  # no coercion across types
        {"query": "q", "limit": 5.5},
        {"query": 5},
        {"query": "q", "unknown": 1},
        {"query": "q", "include_temporary": "yes"},
        {"query": "q", "type": "secret"},
    ],
)
def test_wrong_types_and_unknown_fields_are_invalid_request(data):
    with pytest.raises(InvalidRequest):
        parse_input(RecallInput, data)


def test_body_must_be_an_object():
    with pytest.raises(InvalidRequest):
        parse_input(RecallInput, ["query"])


def test_public_profile_rejects_full_surface_parameters():
    with pytest.raises(InvalidRequest):
        parse_input(RecallPublic, {"query": "q", "bucket": "b"})
    with pytest.raises(InvalidRequest):
        parse_input(RememberPublic, {"content": "x", "supersedes": "mem_1"})
    assert parse_input(SearchPublic, {"query": "q", "project": "p", "team": "t", "type": "fact"})


def test_forget_needs_exactly_one_kind_of_selector():
    with pytest.raises(InvalidRequest):
        parse_input(ForgetInput, {})
    with pytest.raises(InvalidRequest):
        parse_input(ForgetInput, {"reference": "mem_1", "bucket": "b"})
    assert parse_input(ForgetInput, {"bucket": "b"}).bucket == "b"


def test_error_details_never_echo_the_input():
    secret = "z" * 9000
    with pytest.raises(OutOfBounds) as err:
        parse_input(RememberInput, {"content": secret})
    assert secret[:50] not in str(err.value.details) and secret[:50] not in err.value.message
