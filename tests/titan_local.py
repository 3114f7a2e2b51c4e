"""A local HTTP server with Bedrock runtime's InvokeModel shape for Titan Text Embeddings V2
(no AWS account here): `POST /model/{modelId}/invoke` with the documented body (`inputText`,
optional `dimensions` 256/512/1024, `normalize`, `embeddingTypes`), answering `embedding`,
`inputTextTokenCount` and `embeddingsByType`, and a 400 `ValidationException` for anything
else, a text over 8,192 tokens too (`token_count`), as Bedrock does. boto3 reaches it
through AWS_ENDPOINT_URL_BEDROCK_RUNTIME, so the code under test runs unchanged. Its vectors
are hashed words and character trigrams: a real model's scores are not the point, the
request path and the shapes are. `refuse` makes it answer as Bedrock does when throttling or
when the account may not use the model, and `delay` makes it slow, so the embedder's retries
and deadline meet real sockets and botocore's real error parsing."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

import numpy as np

TITAN_V2 = "amazon.titan-embed-text-v2:0"
SIZES = (256, 512, 1024)
KEYS = {"inputText", "dimensions", "normalize", "embeddingTypes"}
_INVOKE = re.compile(r"^/model/(?P<model>[^/]+)/invoke$")
_WORD = re.compile(r"\w+")
MAX_TOKENS = 8192


def token_count(text: str) -> int:
    """An approximation of Titan's count (its tokenizer does not ship): a token per word of
    ASCII text, per character of a dense script, and three per character outside the
    Basic Multilingual Plane (emoji), so 8,000 characters of CJK or emoji pass 8,192, as
    reported against the real model."""
    ascii_words = len(_WORD.findall("".join(c if ord(c) < 128 else " " for c in text)))
    return ascii_words + sum(1 if ord(c) <= 0xFFFF else 3 for c in text if ord(c) >= 128)


def hashed_vector(text: str, dimensions: int, normalize: bool = True) -> list[float]:
    """Words and their character trigrams, each hashed to a signed position."""
    vector = np.zeros(dimensions, dtype=np.float64)
    for word in _WORD.findall(text.lower()):
        padded = f"#{word}#"
        for feature in [word, *(padded[i:i + 3] for i in range(len(padded) - 2))]:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            vector[value % dimensions] += 1.0 if value >> 63 else -1.0
    norm = math.sqrt(float(vector @ vector))
    if normalize and norm:
        vector /= norm
    return vector.tolist()


class TitanLocal:
    """Start with `with TitanLocal() as titan:`; `titan.url` for the endpoint, `titan.requests`
    for the bodies it accepted, `titan.refused` for the messages of those it did not."""

    def __init__(self):
        self.requests: list[dict] = []
        self.refused: list[str] = []
        self.attempts = 0  # every InvokeModel received, refused or not
        self.delay = 0.0  # seconds each request waits before its answer (a model slow to answer)
        self._failures: list[tuple[int, str]] = []
        self._failing_for = 0  # how many more requests get `_failures[0]`; -1: every one
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def refuse(self, status: int, error_type: str, times: int = -1) -> None:
        """Answer the next `times` requests (-1: all, until `recover`) with Bedrock's error of
        that type, e.g. 429 ThrottlingException, 403 AccessDeniedException."""
        with self._lock:
            self._failures, self._failing_for = [(status, error_type)], times

    def recover(self) -> None:
        with self._lock:
            self._failing_for = 0

    def _failure(self) -> tuple[int, str] | None:
        with self._lock:
            self.attempts += 1
            if not self._failing_for:
                return None
            self._failing_for -= 1 if self._failing_for > 0 else 0
            return self._failures[0]

    def answer(self, path: str, headers, raw: bytes) -> tuple[int, dict]:
        match = _INVOKE.match(path)
        if match is None:
            return 404, {"message": f"Unknown operation {path}"}
        if unquote(match["model"]) != TITAN_V2:
            return 400, {"message": "The provided model identifier is invalid."}
        if headers.get("Content-Type") != "application/json":
            return 400, {"message": "Content-Type must be application/json"}
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, {"message": "Malformed input request, please reformat your input and try again."}
        if not isinstance(body, dict) or set(body) - KEYS or not isinstance(body.get("inputText"), str) or not body["inputText"]:
            return 400, {"message": "Malformed input request: #: extraneous key or inputText missing"}
        dimensions, normalize = body.get("dimensions", 1024), body.get("normalize", True)
        if dimensions not in SIZES or not isinstance(normalize, bool) or len(body["inputText"]) > 50_000:
            return 400, {"message": "Malformed input request: dimensions, normalize or inputText out of range"}
        tokens = token_count(body["inputText"])
        if tokens > MAX_TOKENS:  # the message Bedrock gives, as reported (aws-samples/amazon-bedrock-workshop#136)
            return 400, {"message": f"400 Bad Request: Too many input tokens. Max input tokens: {MAX_TOKENS}, request input token count: {tokens}"}
        with self._lock:
            self.requests.append(body)
        vector = hashed_vector(body["inputText"], dimensions, normalize)
        return 200, {"embedding": vector, "inputTextTokenCount": tokens, "embeddingsByType": {"float": vector}}

    def __enter__(self) -> "TitanLocal":
        titan = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                failure = titan._failure()
                if titan.delay:
                    time.sleep(titan.delay)
                if failure is not None:
                    status, error_type, payload = *failure, {"message": f"{failure[1]} (local Titan)"}
                else:
                    status, payload = titan.answer(self.path, self.headers, raw)
                    error_type = "ValidationException" if status == 400 else "UnknownOperationException"
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if status != 200:
                    self.send_header("x-amzn-ErrorType", error_type)
                    with titan._lock:
                        titan.refused.append(payload["message"])
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.block_on_close = False  # a stalled answer must not hold up the test's end
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def environment(self, dimensions: int = 256) -> dict[str, str]:
        """What points boto3 and the service at this server (fake credentials: boto3 signs)."""
        return {
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.url, "AWS_ACCESS_KEY_ID": "AKIDLOCALTITAN", "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": "eu-west-1", "XMEMO_EMBEDDER": "bedrock", "XMEMO_BEDROCK_DIMENSIONS": str(dimensions),
        }

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
