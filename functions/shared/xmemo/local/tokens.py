"""Access tokens shaped like Cognito's, signed and verified locally (RS256).

Verification is what API Gateway's Cognito authorizer does: signature against the JWKS,
issuer, expiry, `token_use=access`, and an app client of this pool (`client_id`)."""

from __future__ import annotations

import copy
import hashlib
import threading
import time
import uuid
from collections import OrderedDict
from typing import Any, Iterable

import jwt

from ..config import Settings
from ..errors import Unauthorized
from .clients import CLI_CLIENT_ID, ClientRegistry
from .keys import SigningKey

LEEWAY_SECONDS = 0


def issuer_of(settings: Settings) -> str:
    return settings.issuer or f"http://127.0.0.1:{settings.port}"


def resources_of(base_url: str) -> list[str]:
    """The resources (RFC 8707) the gateway at `base_url` grants tokens for: its MCP
    endpoints, under 127.0.0.1 and localhost alike."""
    hosts = dict.fromkeys([base_url, base_url.replace("127.0.0.1", "localhost")])
    return [f"{h}{p}" for h in hosts for p in ("/mcp", "/mcp/full")]


def audiences(settings: Settings) -> frozenset[str]:
    """The `aud` values this deployment accepts: its MCP resources and itself (the
    issuer: tokens minted for the REST API, the CLI and client credentials)."""
    base = f"http://127.0.0.1:{settings.port}"
    return frozenset([*resources_of(base), base, base.replace("127.0.0.1", "localhost"), issuer_of(settings)])


def full_scopes(scopes: Iterable[str], resource_server: str) -> list[str]:
    """`memory:read` → `xmemo/memory:read`; already-qualified scopes are kept."""
    return [s if "/" in s else f"{resource_server}/{s}" for s in scopes]


def issue_token(
    settings: Settings,
    key: SigningKey,
    *,
    scopes: Iterable[str],
    sub: str | None = None,
    client_id: str = CLI_CLIENT_ID,
    teams: Iterable[str] = (),
    ttl: int = 3600,
    now: int | None = None,
    audience: str | None = None,
) -> str:
    """A user token (`sub` given: `username`, `cognito:groups` = team:<slug>) or a machine
    token (client-credentials: `sub` = `client_id`, teams in `custom:teams`). `aud` is the
    resource granted (RFC 8707: the MCP endpoint an OAuth client named), else the issuer."""
    now = int(time.time()) if now is None else now
    teams = sorted(set(teams))
    claims: dict[str, Any] = {
        "sub": sub or client_id,
        "token_use": "access",
        "scope": " ".join(full_scopes(scopes, settings.resource_server)),
        "auth_time": now,
        "iss": issuer_of(settings),
        "exp": now + ttl,
        "iat": now,
        "version": 2,
        "jti": str(uuid.uuid4()),
        "client_id": client_id,
        "aud": audience or issuer_of(settings),
    }
    if sub:
        claims["username"] = sub
        if teams:
            claims["cognito:groups"] = [f"team:{t}" for t in teams]
    elif teams:
        claims["custom:teams"] = ",".join(teams)
    return jwt.encode(claims, key.private_key, algorithm="RS256", headers={"kid": key.kid})


def verify_token(token: str, settings: Settings, key: SigningKey, clients: ClientRegistry) -> dict[str, Any]:
    """The verified claims, or `Unauthorized` (the message says why, never echoes the token)."""
    return _known_client(_verify_signed(token, settings, key), clients)


class VerifiedTokens:
    """The authorizer's result cache: a token whose signature, issuer and claims were
    verified is not verified again while it is unexpired (API Gateway caches authorizer
    results the same way). Keyed by the token's SHA-256, never the token itself; expiry
    and the app client's existence are checked on every use; at most `size` entries."""

    def __init__(self, size: int = 4096):
        self.size = size
        self._entries: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def verify(self, token: str, settings: Settings, key: SigningKey, clients: ClientRegistry) -> dict[str, Any]:
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            claims = self._entries.get(digest)
            if claims is not None:
                self._entries.move_to_end(digest)
        if claims is None:
            claims = _verify_signed(token, settings, key)
            with self._lock:
                self._entries[digest] = claims
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        elif time.time() >= float(claims["exp"]) + LEEWAY_SECONDS:
            with self._lock:
                self._entries.pop(digest, None)
            raise Unauthorized("token expired")
        return copy.deepcopy(_known_client(claims, clients))  # callers may not change what the next request sees


def _known_client(claims: dict[str, Any], clients: ClientRegistry) -> dict[str, Any]:
    """`claims`, if their app client is (still) registered: checked on every request."""
    if not clients.is_known(str(claims.get("client_id"))):
        raise Unauthorized("token issued to an unknown app client")
    return claims


def _verify_signed(token: str, settings: Settings, key: SigningKey) -> dict[str, Any]:
    """Signature, issuer, expiry and token use, without the client registry."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise Unauthorized("malformed bearer token") from None
    if header.get("alg") != "RS256" or header.get("kid") != key.kid:
        raise Unauthorized("token not signed by this issuer's key")
    try:
        claims = jwt.decode(
            token,
            key.public_key,
            algorithms=["RS256"],
            issuer=issuer_of(settings),
            leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "iss", "token_use", "client_id"], "verify_aud": False},
        )
    except jwt.ExpiredSignatureError:
        raise Unauthorized("token expired") from None
    except jwt.InvalidIssuerError:
        raise Unauthorized("token from another issuer") from None
    except jwt.PyJWTError:
        raise Unauthorized("invalid token") from None
    if claims.get("token_use") != "access":
        raise Unauthorized("an access token is required")
    aud = claims.get("aud")
    if not aud or not set([aud] if isinstance(aud, str) else aud) <= audiences(settings):
        raise Unauthorized("token issued for another audience")  # RFC 8707: not for this deployment
    return claims
