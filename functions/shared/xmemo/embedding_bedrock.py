"""Amazon Titan Text Embeddings V2 through boto3 `bedrock-runtime`, the AWS semantic leg.

The client is created lazily (no I/O at import or construction) and reused across warm
invocations. Vectors are requested normalised, so cosine = dot product, the same as the
local embedder; the OpenSearch `knn_vector` dimension follows `dimensions`."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Sequence

from .errors import StoreUnavailable

TITAN_V2 = "amazon.titan-embed-text-v2:0"
DIMENSIONS = (256, 512, 1024)
if TYPE_CHECKING:
    import numpy as np

MAX_INPUT_CHARS = 50_000  # Titan v2 accepts up to 50,000 characters (8,192 tokens)


def request_body(text: str, dimensions: int) -> dict[str, Any]:
    """The InvokeModel body Titan v2 documents: inputText, dimensions, normalize."""
    if dimensions not in DIMENSIONS:
        raise ValueError(f"Titan v2 dimensions must be one of {DIMENSIONS}")
    return {"inputText": text[:MAX_INPUT_CHARS], "dimensions": dimensions, "normalize": True}


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

    def __init__(self, dimensions: int = 1024, model_id: str = TITAN_V2, region: str | None = None, client: Any = None):
        if dimensions not in DIMENSIONS:
            raise ValueError(f"Titan v2 dimensions must be one of {DIMENSIONS}")
        self.dimension = dimensions
        self.model_id = model_id
        self._region = region
        self._client = client
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3  # local import: no client at import time
                    from botocore.config import Config

                    config = Config(connect_timeout=2, read_timeout=5, retries={"max_attempts": 3, "mode": "standard"})
                    self._client = boto3.client("bedrock-runtime", region_name=self._region, config=config)
        return self._client

    def _embed(self, text: str) -> np.ndarray:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._get().invoke_model(
                modelId=self.model_id,
                body=json.dumps(request_body(text, self.dimension)),
                contentType="application/json",
                accept="application/json",
            )
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in {"ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException", "ModelTimeoutException"}:
                raise StoreUnavailable("the embedding model did not answer in time") from None
            raise
        except BotoCoreError:  # connection errors and timeouts after botocore's own retries
            raise StoreUnavailable("the embedding model did not answer in time") from None
        return parse_response(response["body"].read(), self.dimension)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed(text)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._embed(t) for t in texts])
