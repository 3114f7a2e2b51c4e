"""Amazon Titan Text Embeddings V2 through boto3 `bedrock-runtime`, the AWS semantic leg.

The client is created lazily (no I/O at import or construction) and reused across warm
invocations. Vectors are requested normalised, so cosine = dot product, the same as the
local embedder; the OpenSearch `knn_vector` dimension follows `dimensions`.

One embedding finishes within `deadline_s`, retries included: botocore's own retries are off
(its `max_attempts` counts retries, not attempts, and each may wait the whole read timeout),
and an attempt starts only when its worst case still fits, so a throttled or stalled model
is a 503 inside the Lambda timeout, not the gateway's error after it."""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Sequence

from .errors import StoreUnavailable

log = logging.getLogger(__name__)
TITAN_V2 = "amazon.titan-embed-text-v2:0"
DIMENSIONS = (256, 512, 1024)
if TYPE_CHECKING:
    import numpy as np

MAX_INPUT_CHARS = 50_000  # Titan v2 accepts up to 50,000 characters (8,192 tokens)
# Titan's refusal of a text over 8,192 tokens, e.g. "400 Bad Request: Too many input tokens.
# Max input tokens: 8192, request input token count: 9875": a memory of 8,000 characters in a
# dense script (CJK, emoji) can pass the limit, and no tokenizer of Titan's ships to count first.
TOO_MANY_TOKENS = "too many input tokens"
_COUNTS = re.compile(r"max input tokens\D*(\d+)\D+?count\D*(\d+)", re.IGNORECASE)
# retried: the statuses botocore's standard mode retries (Bedrock's InternalServerException, a
# 500, says "retry your request"), and Bedrock's transient codes whatever their status
RETRYABLE = {"ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException", "ModelTimeoutException"}
RETRYABLE_STATUS = {429, 500, 502, 503, 504}
CONNECT_TIMEOUT_S = 1.0  # at most; Bedrock's endpoint is in the function's region
BACKOFF_S = 0.1


def request_body(text: str, dimensions: int) -> dict[str, Any]:
    """The InvokeModel body Titan v2 documents: inputText, dimensions, normalize."""
    if dimensions not in DIMENSIONS:
        raise ValueError(f"Titan v2 dimensions must be one of {DIMENSIONS}")
    return {"inputText": text[:MAX_INPUT_CHARS], "dimensions": dimensions, "normalize": True}


def shortened(text: str, message: str) -> str | None:
    """The part of `text` that should fit, when `message` is Titan's refusal of too many
    input tokens (None otherwise): cut in proportion to the counts it names, with a margin,
    else halved. The vector then stands for the memory's first part; the lexical index
    keeps the whole text."""
    if TOO_MANY_TOKENS not in message.lower() or len(text) < 2:
        return None
    keep = len(text) // 2
    counts = _COUNTS.search(message)
    if counts and 0 < int(counts[1]) < int(counts[2]):
        keep = int(len(text) * int(counts[1]) / int(counts[2]) * 0.9)
    return text[: max(1, min(keep, len(text) - 1))]


def parse_response(payload: bytes | str, dimensions: int) -> np.ndarray:
    """The `embedding` of a Titan v2 response, checked for the expected size."""
    import numpy as np  # only where a vector is made: importing this module stays cheap

    data = json.loads(payload)
    vector = np.asarray(data["embedding"], dtype=np.float32)
    if vector.shape != (dimensions,):
        raise ValueError(f"Titan returned {vector.shape[0]} values, expected {dimensions}")
    return vector


class BedrockTitanEmbedder:
    """`Embedder` over Titan Text Embeddings V2. Titan v2 has no query/passage prefixes,
    so both sides embed the text as is, one InvokeModel call per text."""

    name = "bedrock"

    def __init__(self, dimensions: int = 1024, model_id: str = TITAN_V2, region: str | None = None, client: Any = None,
                 timeout_s: float = 2.0, deadline_s: float = 4.0, sleep=time.sleep):
        if dimensions not in DIMENSIONS:
            raise ValueError(f"Titan v2 dimensions must be one of {DIMENSIONS}")
        self.dimension = dimensions
        self.model_id = model_id
        self._region = region
        self._client = client
        self._timeout_s = timeout_s
        self._attempt_s = timeout_s + min(CONNECT_TIMEOUT_S, timeout_s)  # one attempt's worst case
        self._deadline_s = deadline_s
        self._sleep = sleep
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3  # local import: no client at import time
                    from botocore.config import Config

                    config = Config(connect_timeout=min(CONNECT_TIMEOUT_S, self._timeout_s), read_timeout=self._timeout_s,
                                    retries={"total_max_attempts": 1, "mode": "standard"})  # `_embed` retries, within its deadline
                    self._client = boto3.client("bedrock-runtime", region_name=self._region, config=config)
        return self._client

    def _embed(self, text: str) -> np.ndarray:
        from botocore.exceptions import ClientError, HTTPClientError
        from botocore.exceptions import ConnectionError as BotoConnectionError

        end = time.monotonic() + self._deadline_s
        attempt = 0
        while True:
            try:
                body = json.dumps(request_body(text, self.dimension))
                response = self._get().invoke_model(modelId=self.model_id, body=body, contentType="application/json", accept="application/json")
                return parse_response(response["body"].read(), self.dimension)
            except ClientError as exc:
                reason = exc.response.get("Error", {}).get("Code", "")
                shorter = shortened(text, exc.response.get("Error", {}).get("Message", "")) if reason == "ValidationException" else None
                if shorter is not None and time.monotonic() + self._attempt_s <= end:
                    log.warning("bedrock: a text over Titan's token limit is embedded by its first %d of %d characters", len(shorter), len(text))
                    text = shorter
                    continue
                if reason not in RETRYABLE and exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") not in RETRYABLE_STATUS:
                    raise
            except (BotoConnectionError, HTTPClientError) as exc:  # refused, reset, connect or read timeout
                reason = type(exc).__name__
            attempt += 1
            pause = BACKOFF_S * 2 ** (attempt - 1) * (0.5 + random.random())
            log.warning("bedrock InvokeModel failed (%s), attempt %d", reason, attempt)
            if time.monotonic() + pause + self._attempt_s > end:
                raise StoreUnavailable("the embedding model did not answer in time") from None
            self._sleep(pause)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed(text)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._embed(t) for t in texts])
