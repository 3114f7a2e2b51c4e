"""The Python client of XMemo's REST API (`pip install 'xmemo[client]'`: httpx and
pydantic only; nothing here imports the store, numpy, tiktoken, boto3 or Powertools).

    from xmemo.client import XMemo
    with XMemo("http://127.0.0.1:8787", token=...) as memory:
        memory.remember("We deploy on Fridays only after the freeze review.", type="decision")
        for hit in memory.recall("when do we deploy?").results:
            print(hit.reference, hit.content)
"""

from .auth import ClientCredentials, StaticToken, StoredLogin, TokenFunction, TokenProvider
from .clients import AsyncXMemo, XMemo, resolve_auth
from .errors import (
    APIError,
    AuthenticationError,
    CapturePolicyError,
    InsufficientScopeError,
    InvalidRequestError,
    NotFoundError,
    OutOfBoundsError,
    RateLimitedError,
    ServerError,
    StoreUnavailableError,
    TeamMismatchError,
    TransportError,
    UnauthorizedError,
)
from .transport import Retry

__all__ = [
    "APIError", "AsyncXMemo", "AuthenticationError", "CapturePolicyError", "ClientCredentials", "InsufficientScopeError",
    "InvalidRequestError", "NotFoundError", "OutOfBoundsError", "RateLimitedError", "Retry", "ServerError", "StaticToken",
    "StoreUnavailableError", "StoredLogin", "TeamMismatchError", "TokenFunction", "TokenProvider", "TransportError",
    "UnauthorizedError", "XMemo", "resolve_auth",
]
